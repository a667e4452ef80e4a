//! Reading tool arguments leniently: the host has validated and coerced them against
//! the schema, but the registry can also be called directly, so every accessor
//! tolerates missing or mistyped values and falls back to the default.

use serde_json::Value;

/// A string argument (`None` when missing or not a string).
pub fn str_arg<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

/// An integer argument: numbers (fractions truncated) or numeric strings.
pub fn int_arg(args: &Value, key: &str, default: i64) -> i64 {
    match args.get(key) {
        Some(Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().map(|f| f as i64))
            .unwrap_or(default),
        Some(Value::String(s)) => s.trim().parse().unwrap_or(default),
        _ => default,
    }
}

/// A boolean argument: booleans or `"true"`/`"false"` strings.
pub fn bool_arg(args: &Value, key: &str, default: bool) -> bool {
    match args.get(key) {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" => true,
            "false" | "0" | "no" => false,
            _ => default,
        },
        _ => default,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lenient_accessors() {
        let args = json!({"a": 3, "b": "7", "c": 2.9, "d": "x", "t": "true", "f": false});
        assert_eq!(int_arg(&args, "a", 0), 3);
        assert_eq!(int_arg(&args, "b", 0), 7);
        assert_eq!(int_arg(&args, "c", 0), 2);
        assert_eq!(int_arg(&args, "d", 5), 5);
        assert_eq!(int_arg(&args, "missing", 9), 9);
        assert!(bool_arg(&args, "t", false));
        assert!(!bool_arg(&args, "f", true));
        assert_eq!(str_arg(&args, "d"), Some("x"));
        assert_eq!(str_arg(&args, "a"), None);
    }
}
