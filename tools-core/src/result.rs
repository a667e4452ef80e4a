//! Builders for tool result JSON, shared by every tool so error shapes stay uniform.

use serde_json::{Value, json};

/// `{"error": message}` — an expected failure the model can read and act on.
pub fn tool_error(message: impl Into<String>) -> Value {
    json!({ "error": message.into() })
}

/// `{"error": message}` as a JSON string.
pub fn error_json(message: impl Into<String>) -> String {
    tool_error(message).to_string()
}

/// True when a result value reports an error (`{"error": <non-null>}`).
pub fn is_error_value(value: &Value) -> bool {
    value
        .get("error")
        .is_some_and(|e| !e.is_null() && e != &Value::Bool(false))
}

/// True when a result string is a JSON object with a non-null `error` field.
/// Cheap for the common case: no parse unless the text mentions `"error"`.
pub fn is_error_result(result: &str) -> bool {
    result.contains("\"error\"")
        && serde_json::from_str::<Value>(result).is_ok_and(|v| is_error_value(&v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_detection() {
        assert!(is_error_result(r#"{"error":"x"}"#));
        assert!(!is_error_result(r#"{"error":null}"#));
        assert!(!is_error_result(
            r#"{"output":"the word \"error\" appears"}"#
        ));
        assert!(!is_error_result("not json"));
    }
}
