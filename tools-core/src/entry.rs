//! `ToolEntry`: everything the registry knows about one tool, and its builder.
//!
//! Hermes' `register(name, toolset, schema, handler, check_fn, requires_env,
//! is_async, description, emoji)` plus: max result size, parallelism, dynamic schema
//! overrides, a definitions-time schema patch, and the tool's source.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};

use crate::availability::AvailabilityCheck;
use crate::context::ToolContext;
use crate::error::RegisterError;
use crate::handler::{ToolHandler, ToolOutcome};

/// Default per-result size limit (characters) before the result is spilled to a file.
pub const DEFAULT_MAX_RESULT_CHARS: usize = 100_000;

/// Where a tool came from.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ToolSource {
    /// Built into toolhost (tools-core).
    Core,
    /// Registered by the native plugin with this name.
    Plugin(String),
    /// Discovered from the MCP server with this name.
    Mcp(String),
}

impl fmt::Display for ToolSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolSource::Core => f.write_str("core"),
            ToolSource::Plugin(name) => write!(f, "plugin {name}"),
            ToolSource::Mcp(server) => write!(f, "mcp {server}"),
        }
    }
}

/// How a call of this tool may overlap with other calls of one batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Parallelism {
    /// A barrier: runs alone, after everything before it and before everything after it
    /// (interactive or mutating tools; the default).
    Exclusive,
    /// May run concurrently with other parallel calls.
    Safe,
    /// May run concurrently with calls on non-overlapping paths; the path is the
    /// string argument named here.
    PathScoped(String),
}

/// Shallow overrides merged over the function schema at definitions time
/// (e.g. limits that come from configuration).
pub type DynamicSchemaFn = dyn Fn() -> Option<Map<String, Value>> + Send + Sync;

/// What a schema patch decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemaPatch {
    /// Keep the (possibly edited) definition.
    Keep,
    /// Drop the tool from this definitions list.
    Remove,
}

/// Edits a tool's function definition given the names of all tools that survived
/// filtering (e.g. `execute_code` lists only the sandbox tools that are present).
pub type SchemaPatchFn =
    dyn Fn(&mut Map<String, Value>, &BTreeSet<String>) -> SchemaPatch + Send + Sync;

/// A registered tool.
pub struct ToolEntry {
    /// Unique wire name.
    pub name: String,
    /// Owning toolset (tools join toolsets of the same name dynamically).
    pub toolset: String,
    /// Description shown to the model.
    pub description: String,
    /// JSON Schema of the arguments (an object schema).
    pub parameters: Value,
    /// The code that runs a call.
    pub handler: ToolHandler,
    /// Optional availability probe.
    pub check: Option<Arc<AvailabilityCheck>>,
    /// Environment variables the tool needs (informational).
    pub requires_env: Vec<String>,
    /// UI emoji; `⚡` when empty.
    pub emoji: String,
    /// Results longer than this are spilled to a file; `None` = default, `Some(usize::MAX)`
    /// = never.
    pub max_result_chars: Option<usize>,
    /// Batch concurrency class.
    pub parallelism: Parallelism,
    /// Overrides merged over the schema at definitions time.
    pub dynamic_schema: Option<Arc<DynamicSchemaFn>>,
    /// Definitions-time patch that sees the surviving tool names.
    pub schema_patch: Option<Arc<SchemaPatchFn>>,
    /// Where the tool came from.
    pub source: ToolSource,
    validator: OnceLock<Option<jsonschema::Validator>>,
}

impl fmt::Debug for ToolEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolEntry")
            .field("name", &self.name)
            .field("toolset", &self.toolset)
            .field("source", &self.source)
            .field("handler", &self.handler)
            .field("parallelism", &self.parallelism)
            .finish_non_exhaustive()
    }
}

impl ToolEntry {
    /// Start building a tool.
    pub fn builder(name: impl Into<String>, toolset: impl Into<String>) -> ToolBuilder {
        ToolBuilder::new(name, toolset)
    }

    /// Hermes' `is_async`.
    pub fn is_async(&self) -> bool {
        self.handler.is_async()
    }

    /// The emoji, with the `⚡` fallback.
    pub fn emoji(&self) -> &str {
        if self.emoji.is_empty() {
            "⚡"
        } else {
            &self.emoji
        }
    }

    /// Whether calls may overlap others in a batch (`Safe` or `PathScoped`).
    pub fn parallel_safe(&self) -> bool {
        !matches!(self.parallelism, Parallelism::Exclusive)
    }

    /// The effective result limit.
    pub fn max_result_chars(&self) -> usize {
        self.max_result_chars.unwrap_or(DEFAULT_MAX_RESULT_CHARS)
    }

    /// The OpenAI function schema `{"name","description","parameters"}` (static part).
    pub fn function_schema(&self) -> Map<String, Value> {
        let mut function = Map::new();
        function.insert("name".into(), Value::String(self.name.clone()));
        function.insert(
            "description".into(),
            Value::String(self.description.clone()),
        );
        function.insert("parameters".into(), self.parameters.clone());
        function
    }

    /// The compiled argument validator (compiled on first use; `None` when the schema
    /// cannot be compiled, in which case arguments are not validated and a warning is
    /// logged once).
    pub fn validator(&self) -> Option<&jsonschema::Validator> {
        self.validator
            .get_or_init(|| match jsonschema::validator_for(&self.parameters) {
                Ok(v) => Some(v),
                Err(err) => {
                    tracing::warn!(tool = %self.name, error = %err, "tool schema does not compile; arguments will not be validated");
                    None
                }
            })
            .as_ref()
    }
}

/// Builder for [`ToolEntry`]; `build` validates name and schema.
pub struct ToolBuilder {
    entry: ToolEntry,
}

impl ToolBuilder {
    fn new(name: impl Into<String>, toolset: impl Into<String>) -> Self {
        ToolBuilder {
            entry: ToolEntry {
                name: name.into(),
                toolset: toolset.into(),
                description: String::new(),
                parameters: serde_json::json!({"type": "object", "properties": {}}),
                handler: ToolHandler::sync(|_, _| {
                    Ok(serde_json::json!({"error": "tool has no handler"}))
                }),
                check: None,
                requires_env: Vec::new(),
                emoji: String::new(),
                max_result_chars: None,
                parallelism: Parallelism::Exclusive,
                dynamic_schema: None,
                schema_patch: None,
                source: ToolSource::Core,
                validator: OnceLock::new(),
            },
        }
    }

    /// Description shown to the model.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.entry.description = description.into();
        self
    }

    /// JSON Schema of the arguments.
    pub fn parameters(mut self, parameters: Value) -> Self {
        self.entry.parameters = parameters;
        self
    }

    /// Take description and parameters from an OpenAI function schema
    /// (`{"description", "parameters"}`; a `name` inside is ignored).
    pub fn schema(mut self, schema: &Value) -> Self {
        if let Some(d) = schema.get("description").and_then(Value::as_str) {
            self.entry.description = d.to_string();
        }
        if let Some(p) = schema.get("parameters") {
            self.entry.parameters = p.clone();
        }
        self
    }

    /// The handler.
    pub fn handler(mut self, handler: ToolHandler) -> Self {
        self.entry.handler = handler;
        self
    }

    /// A synchronous handler closure.
    pub fn sync_handler<F>(self, f: F) -> Self
    where
        F: Fn(Value, &ToolContext) -> ToolOutcome + Send + Sync + 'static,
    {
        self.handler(ToolHandler::sync(f))
    }

    /// Availability check.
    pub fn check(mut self, check: Arc<AvailabilityCheck>) -> Self {
        self.entry.check = Some(check);
        self
    }

    /// Environment variables the tool needs.
    pub fn requires_env<I, S>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.entry.requires_env = vars.into_iter().map(Into::into).collect();
        self
    }

    /// UI emoji.
    pub fn emoji(mut self, emoji: impl Into<String>) -> Self {
        self.entry.emoji = emoji.into();
        self
    }

    /// Result size limit in characters (`usize::MAX` = never spill).
    pub fn max_result_chars(mut self, limit: usize) -> Self {
        self.entry.max_result_chars = Some(limit);
        self
    }

    /// Batch concurrency class.
    pub fn parallelism(mut self, parallelism: Parallelism) -> Self {
        self.entry.parallelism = parallelism;
        self
    }

    /// Shorthand: `Parallelism::Safe` when true, `Exclusive` when false.
    pub fn parallel_safe(self, safe: bool) -> Self {
        self.parallelism(if safe {
            Parallelism::Safe
        } else {
            Parallelism::Exclusive
        })
    }

    /// Dynamic schema overrides.
    pub fn dynamic_schema<F>(mut self, f: F) -> Self
    where
        F: Fn() -> Option<Map<String, Value>> + Send + Sync + 'static,
    {
        self.entry.dynamic_schema = Some(Arc::new(f));
        self
    }

    /// Definitions-time schema patch.
    pub fn schema_patch<F>(mut self, f: F) -> Self
    where
        F: Fn(&mut Map<String, Value>, &BTreeSet<String>) -> SchemaPatch + Send + Sync + 'static,
    {
        self.entry.schema_patch = Some(Arc::new(f));
        self
    }

    /// Where the tool comes from.
    pub fn source(mut self, source: ToolSource) -> Self {
        self.entry.source = source;
        self
    }

    /// Validate and finish.
    pub fn build(self) -> Result<ToolEntry, RegisterError> {
        let entry = self.entry;
        validate_name(&entry.name)?;
        if entry.toolset.is_empty() {
            return Err(RegisterError::InvalidSchema {
                name: entry.name,
                reason: "toolset is empty".into(),
            });
        }
        if !entry.parameters.is_object() {
            return Err(RegisterError::InvalidSchema {
                name: entry.name,
                reason: "parameters must be a JSON object".into(),
            });
        }
        Ok(entry)
    }
}

/// Tool names providers accept: 1–64 chars of `[A-Za-z0-9_-]`.
pub fn validate_name(name: &str) -> Result<(), RegisterError> {
    let reason = if name.is_empty() {
        Some("empty")
    } else if name.len() > 64 {
        Some("longer than 64 characters")
    } else if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        Some("only ASCII letters, digits, '_' and '-' are allowed")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(RegisterError::InvalidName {
            name: name.to_string(),
            reason,
        }),
        None => Ok(()),
    }
}
