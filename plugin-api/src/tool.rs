//! [`Tool`]: one tool a plugin offers the model.

use std::borrow::Cow;

use serde_json::{Value, json};

use crate::context::ToolContext;
use crate::error::ToolError;
use crate::wire::ToolDeclaration;

/// What a handler returns: the result JSON, or why the call failed.
pub type ToolResult = Result<Value, ToolError>;

/// A tool handler: plain synchronous Rust. The host runs it on a worker thread with a
/// timeout, so it may block; it must not rely on the host's async runtime.
pub type Handler = dyn Fn(Value, &ToolContext<'_>) -> ToolResult + Send + Sync;

/// An availability check: `Err(reason)` when the tool cannot be used right now.
pub type Check = dyn Fn() -> Result<(), String> + Send + Sync;

/// One tool: a name, a toolset, an argument schema and a handler, plus optional
/// metadata. Build it with [`Tool::new`] and the chained setters.
///
/// ```
/// use toolhost_plugin_api::prelude::*;
///
/// let tool = Tool::new("shout", "text", |args, _ctx| {
///     let text = args["text"].as_str().unwrap_or_default();
///     Ok(json!({ "text": text.to_uppercase() }))
/// })
/// .description("Upper-case some text")
/// .parameters(json!({
///     "type": "object",
///     "properties": { "text": { "type": "string" } },
///     "required": ["text"]
/// }))
/// .parallel_safe(true);
/// # let _ = tool;
/// ```
pub struct Tool {
    pub(crate) name: String,
    pub(crate) toolset: String,
    pub(crate) description: String,
    pub(crate) parameters: Value,
    pub(crate) handler: Box<Handler>,
    pub(crate) check: Option<Box<Check>>,
    pub(crate) requires_env: Vec<String>,
    pub(crate) emoji: String,
    pub(crate) max_result_chars: Option<usize>,
    pub(crate) parallel_safe: bool,
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name)
            .field("toolset", &self.toolset)
            .finish_non_exhaustive()
    }
}

impl Tool {
    /// A tool named `name` (1–64 of `[A-Za-z0-9_-]`) in `toolset` (empty = the plugin's
    /// name), run by `handler`. The default schema accepts an empty object.
    pub fn new<F>(name: impl Into<String>, toolset: impl Into<String>, handler: F) -> Self
    where
        F: Fn(Value, &ToolContext<'_>) -> ToolResult + Send + Sync + 'static,
    {
        Tool {
            name: name.into(),
            toolset: toolset.into(),
            description: String::new(),
            parameters: crate::wire::empty_object_schema(),
            handler: Box::new(handler),
            check: None,
            requires_env: Vec::new(),
            emoji: String::new(),
            max_result_chars: None,
            parallel_safe: false,
        }
    }

    /// A tool whose arguments are deserialized into `A` and whose schema is derived from
    /// `A` with [`schemars`]; the handler may return anything serializable.
    /// Arguments that do not fit `A` become an `invalid_arguments` error.
    ///
    /// ```
    /// use toolhost_plugin_api::prelude::*;
    /// use toolhost_plugin_api::{schemars::JsonSchema, serde::Deserialize};
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// #[schemars(crate = "toolhost_plugin_api::schemars")]
    /// #[serde(crate = "toolhost_plugin_api::serde")]
    /// struct Repeat {
    ///     /// The text to repeat.
    ///     text: String,
    ///     /// How many times.
    ///     times: usize,
    /// }
    ///
    /// let tool = Tool::typed("repeat", "text", |a: Repeat, _ctx| Ok(a.text.repeat(a.times)));
    /// # let _ = tool;
    /// ```
    #[cfg(feature = "schemars")]
    pub fn typed<A, R, F>(name: impl Into<String>, toolset: impl Into<String>, handler: F) -> Self
    where
        A: serde::de::DeserializeOwned + schemars::JsonSchema,
        R: serde::Serialize,
        F: Fn(A, &ToolContext<'_>) -> Result<R, ToolError> + Send + Sync + 'static,
    {
        let mut parameters = serde_json::to_value(schemars::schema_for!(A)).unwrap_or_default();
        let mut description = String::new();
        if let Some(map) = parameters.as_object_mut() {
            map.remove("$schema");
            map.remove("title");
            if let Some(Value::String(text)) = map.remove("description") {
                description = text;
            }
        }
        Tool::new(name, toolset, move |args, ctx| {
            let args: A = serde_json::from_value(args)
                .map_err(|e| ToolError::invalid_arguments(e.to_string()))?;
            let out = handler(args, ctx)?;
            serde_json::to_value(out).map_err(|e| ToolError::new(e.to_string()))
        })
        .parameters(parameters)
        .description(description)
    }

    /// The description shown to the model.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// The JSON Schema of the arguments (an object schema).
    pub fn parameters(mut self, parameters: Value) -> Self {
        self.parameters = parameters;
        self
    }

    /// Description and parameters from an OpenAI function schema
    /// (`{"description": ..., "parameters": {...}}`; a `name` inside is ignored).
    pub fn schema(mut self, schema: Value) -> Self {
        if let Some(text) = schema.get("description").and_then(Value::as_str) {
            self.description = text.to_string();
        }
        if let Some(parameters) = schema.get("parameters") {
            self.parameters = parameters.clone();
        }
        self
    }

    /// An availability check, run by the host before offering the tool (cached ~30 s).
    /// A check that panics counts as "unavailable".
    pub fn check<F>(mut self, check: F) -> Self
    where
        F: Fn() -> Result<(), String> + Send + Sync + 'static,
    {
        self.check = Some(Box::new(check));
        self
    }

    /// Available only while environment variable `var` is set and not empty
    /// (also records `var` in [`requires_env`](Self::requires_env)).
    pub fn available_if_env(mut self, var: impl Into<String>) -> Self {
        let var = var.into();
        self.requires_env.push(var.clone());
        self.check(move || match std::env::var_os(&var) {
            Some(value) if !value.is_empty() => Ok(()),
            _ => Err(format!("environment variable {var} is not set")),
        })
    }

    /// Environment variables the tool needs (shown by `toolhost plugins info`).
    pub fn requires_env<I, S>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.requires_env.extend(vars.into_iter().map(Into::into));
        self
    }

    /// An emoji for user interfaces.
    pub fn emoji(mut self, emoji: impl Into<String>) -> Self {
        self.emoji = emoji.into();
        self
    }

    /// Results longer than this many characters are saved to a file and the model gets
    /// a preview (default: the host's limit).
    pub fn max_result_chars(mut self, limit: usize) -> Self {
        self.max_result_chars = Some(limit);
        self
    }

    /// May run concurrently with other parallel-safe calls of the same batch (default
    /// `false`: the call runs alone). Only read-only tools should say `true`.
    pub fn parallel_safe(mut self, safe: bool) -> Self {
        self.parallel_safe = safe;
        self
    }

    /// The tool as declared to the host; an empty toolset becomes `default_toolset`.
    pub(crate) fn declaration<'a>(&'a self, default_toolset: &'a str) -> ToolDeclaration<'a> {
        ToolDeclaration {
            name: Cow::Borrowed(&self.name),
            toolset: Cow::Borrowed(if self.toolset.is_empty() {
                default_toolset
            } else {
                &self.toolset
            }),
            description: Cow::Borrowed(&self.description),
            parameters: Cow::Borrowed(&self.parameters),
            requires_env: Cow::Borrowed(&self.requires_env),
            emoji: Cow::Borrowed(&self.emoji),
            max_result_chars: self.max_result_chars,
            parallel_safe: self.parallel_safe,
            has_check: self.check.is_some(),
        }
    }
}

/// `{"error": message}`: a result that tells the model what went wrong, for failures it
/// should read and react to (not a crash of the tool).
pub fn tool_error(message: impl Into<String>) -> Value {
    json!({ "error": message.into() })
}
