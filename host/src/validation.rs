//! Argument validation against a tool's JSON Schema, with errors that name the JSON
//! pointer of every offending value so the model can fix exactly that field.

use serde_json::Value;
use tools_core::ToolEntry;

/// At most this many problems are listed in one error.
const MAX_REPORTED: usize = 5;

/// `Ok(())` when `args` satisfy the tool's schema (or the schema could not be
/// compiled), else a message like `"/count: \"x\" is not of type \"integer\""`.
pub fn validate_args(entry: &ToolEntry, args: &Value) -> Result<(), String> {
    let Some(validator) = entry.validator() else {
        return Ok(());
    };
    if validator.is_valid(args) {
        return Ok(());
    }
    let mut problems: Vec<String> = Vec::new();
    let mut total = 0usize;
    for error in validator.iter_errors(args) {
        total += 1;
        if problems.len() < MAX_REPORTED {
            let pointer = error.instance_path().to_string();
            let pointer = if pointer.is_empty() {
                "/".to_string()
            } else {
                pointer
            };
            problems.push(format!("{pointer}: {error}"));
        }
    }
    if total > problems.len() {
        problems.push(format!("... and {} more", total - problems.len()));
    }
    Err(problems.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry() -> ToolEntry {
        ToolEntry::builder("t", "x")
            .parameters(json!({
                "type": "object",
                "properties": {
                    "count": {"type": "integer", "minimum": 1},
                    "opts": {"type": "object", "properties": {"mode": {"enum": ["a", "b"]}}}
                },
                "required": ["count"]
            }))
            .build()
            .unwrap()
    }

    #[test]
    fn valid_args_pass() {
        assert!(validate_args(&entry(), &json!({"count": 2})).is_ok());
    }

    #[test]
    fn errors_name_the_pointer() {
        let err = validate_args(&entry(), &json!({"count": 0, "opts": {"mode": "z"}})).unwrap_err();
        assert!(err.contains("/count:"), "{err}");
        assert!(err.contains("/opts/mode:"), "{err}");
    }

    #[test]
    fn missing_required_points_at_root() {
        let err = validate_args(&entry(), &json!({})).unwrap_err();
        assert!(err.starts_with("/: "), "{err}");
        assert!(err.contains("count"), "{err}");
    }
}
