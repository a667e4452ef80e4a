//! Typed tool arguments: every core tool reads its arguments into a
//! `#[derive(Deserialize)]` struct with [`parse`], so the fields a tool accepts are
//! written down once and checked against its JSON schema by a test
//! (`tools/args_schema_tests.rs`).
//!
//! Arguments that do not fit the struct are an `invalid_arguments` [`ToolError`]: the
//! model reads `{"error":"Tool execution failed: invalid_arguments: …"}`, the shape a
//! plugin's `Tool::typed` gives too. Unknown fields are ignored, as Hermes' handlers
//! (`args.get(...)`) ignore them.
//!
//! Leniency: the dispatch pipeline coerces strings to the schema's types and validates
//! before a handler runs, but the registry can also be called directly (Python plugins'
//! `dispatch_tool`, embedders, tests). Fields whose tool has always read them leniently
//! use the [`lenient`] deserializers, so a value of the wrong type reads as absent (the
//! tool's default or its own "X is required" message) instead of failing the call, and
//! [`Given`] keeps the type of a wrong value for tools whose message names it.

use serde::Deserialize;
use serde::de::{DeserializeOwned, Deserializer};
use serde_json::Value;

use crate::error::ToolError;
use crate::result::tool_error;

/// Read `args` into the tool's argument struct. Anything but a JSON object, or an
/// object whose fields do not fit `T`, is an `invalid_arguments` error.
pub fn parse<T: DeserializeOwned>(args: Value) -> Result<T, InvalidArguments> {
    if !args.is_object() {
        return Err(InvalidArguments(format!(
            "expected a JSON object, got {}",
            json_type(&args)
        )));
    }
    serde_json::from_value(args).map_err(|e| InvalidArguments(e.to_string()))
}

/// Arguments that do not fit a tool's argument struct.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InvalidArguments(pub String);

impl InvalidArguments {
    /// The result the model reads, for handlers that answer with a value rather than a
    /// [`ToolError`] (the agent-loop tools): the same text the registry makes of the
    /// error.
    pub fn to_result(&self) -> Value {
        tool_error(self.failure_message())
    }

    /// `Tool execution failed: invalid_arguments: …`, for tools whose error results
    /// carry more fields than `error`.
    pub fn failure_message(&self) -> String {
        ToolError::InvalidArguments(self.0.clone()).failure_message()
    }
}

impl From<InvalidArguments> for ToolError {
    fn from(err: InvalidArguments) -> Self {
        ToolError::InvalidArguments(err.0)
    }
}

/// The JSON type of `value` (`string`, `number`, `array`, ...).
pub fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A field whose tool reports a value of the wrong type by naming that type (Hermes'
/// "'content' must be a string, got int"): `Ok` with the value, or the JSON value that
/// came instead. Use it as `Option<Given<T>>` with
/// `#[serde(default, deserialize_with = "args::present")]`, so an explicit `null` is a
/// wrong value rather than a missing field.
#[derive(Debug)]
pub enum Given<T> {
    /// The value, of the expected type.
    Ok(T),
    /// Something else; the value as sent.
    Other(Value),
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Given<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Ok(match T::deserialize(&value) {
            Ok(typed) => Given::Ok(typed),
            Err(_) => Given::Other(value),
        })
    }
}

/// For `Option<T>` fields: a present field is `Some`, even when it is `null` (serde's
/// own `Option` reads `null` as `None`).
pub fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

/// Deserializers for `Option<_>` fields (with `#[serde(default, deserialize_with =
/// "...")]`) that never fail: a value of another type reads as `None`.
pub mod lenient {
    use serde::Deserialize;
    use serde::de::Deserializer;
    use serde_json::Value;

    /// A string; anything else is `None`.
    pub fn string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::String(s) => Some(s),
            _ => None,
        })
    }

    /// An integer: numbers (fractions truncated) or numeric strings.
    pub fn int<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        })
    }

    /// An array of any values; anything else is `None`.
    pub fn list<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<Value>>, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::Array(items) => Some(items),
            _ => None,
        })
    }

    /// A boolean: booleans or `"true"`/`"false"` (also `1`/`0`, `yes`/`no`) strings.
    pub fn boolean<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::Bool(b) => Some(b),
            Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
                "true" | "1" | "yes" => Some(true),
                "false" | "0" | "no" => Some(false),
                _ => None,
            },
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    struct Example {
        #[serde(default, deserialize_with = "lenient::string")]
        s: Option<String>,
        #[serde(default, deserialize_with = "lenient::int")]
        n: Option<i64>,
        #[serde(default, deserialize_with = "lenient::boolean")]
        b: Option<bool>,
        #[serde(default, deserialize_with = "present")]
        g: Option<Given<String>>,
    }

    fn example(args: Value) -> Example {
        parse(args).unwrap()
    }

    #[test]
    fn lenient_integers() {
        for (given, read) in [
            (json!(3), Some(3)),
            (json!("7"), Some(7)),
            (json!(" 8 "), Some(8)),
            (json!(2.9), Some(2)),
            (json!("x"), None),
            (json!([1]), None),
            (json!(null), None),
        ] {
            assert_eq!(example(json!({ "n": given })).n, read, "{given}");
        }
        assert_eq!(example(json!({})).n, None);
    }

    #[test]
    fn lenient_booleans() {
        for (given, read) in [
            (json!(true), Some(true)),
            (json!("true"), Some(true)),
            (json!("FALSE"), Some(false)),
            (json!("0"), Some(false)),
            (json!("maybe"), None),
            (json!(1), None),
        ] {
            assert_eq!(example(json!({ "b": given })).b, read, "{given}");
        }
    }

    #[test]
    fn lenient_strings_ignore_other_types() {
        assert_eq!(example(json!({"s": "x"})).s.as_deref(), Some("x"));
        assert_eq!(example(json!({"s": 5})).s, None);
    }

    #[test]
    fn given_keeps_the_wrong_value_and_null_counts_as_present() {
        assert!(matches!(example(json!({"g": "x"})).g, Some(Given::Ok(s)) if s == "x"));
        assert!(matches!(example(json!({"g": 5})).g, Some(Given::Other(v)) if v == json!(5)));
        assert!(matches!(
            example(json!({"g": null})).g,
            Some(Given::Other(Value::Null))
        ));
        assert!(example(json!({})).g.is_none());
    }

    #[test]
    fn unknown_fields_are_ignored() {
        assert_eq!(
            example(json!({"s": "x", "other": 1})).s.as_deref(),
            Some("x")
        );
    }

    #[test]
    fn non_objects_are_invalid_arguments() {
        for (args, kind) in [
            (json!(null), "null"),
            (json!(["ls"]), "array"),
            (json!("ls"), "string"),
        ] {
            let err = parse::<Example>(args).unwrap_err();
            assert_eq!(err.0, format!("expected a JSON object, got {kind}"));
        }
    }

    #[test]
    fn mistyped_fields_are_invalid_arguments_in_the_registry_shape() {
        #[derive(Debug, Deserialize)]
        struct Strict {
            #[allow(dead_code)]
            n: i64,
        }
        let err = parse::<Strict>(json!({"n": "x"})).unwrap_err();
        assert_eq!(
            err.to_result(),
            json!({"error": format!("Tool execution failed: invalid_arguments: {}", err.0)})
        );
        assert!(err.0.contains("invalid type"), "{err}");
    }
}
