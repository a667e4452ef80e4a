//! Argument coercion: models often send `"42"` for an integer or a bare string for an
//! array. Before validation, string values are converted to the type the schema
//! declares (docs/hermes/registry-and-dispatch.md, section 4): integers and numbers, booleans (`"true"`/`"false"` only),
//! `"null"` where null is allowed, JSON text for objects and arrays, and a scalar where
//! an array is expected becomes a one-element array. Coercion never fails: a value that
//! does not convert is left for the validator to report.

use serde_json::{Map, Number, Value};

/// The types a schema node accepts, in declaration order, and whether null is allowed.
struct Accepts<'a> {
    types: Vec<&'a str>,
    nullable: bool,
}

fn accepts(schema: &Value) -> Accepts<'_> {
    let mut out = Accepts {
        types: Vec::new(),
        nullable: schema.get("nullable").and_then(Value::as_bool) == Some(true),
    };
    match schema.get("type") {
        Some(Value::String(t)) => out.types.push(t.as_str()),
        Some(Value::Array(ts)) => out.types.extend(ts.iter().filter_map(Value::as_str)),
        _ => {}
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            for branch in branches {
                let inner = accepts(branch);
                out.types.extend(inner.types);
                out.nullable |= inner.nullable;
            }
        }
    }
    if out.types.contains(&"null") {
        out.nullable = true;
    }
    out
}

/// The first branch of a union that declares `ty`, or the schema itself.
fn branch_for<'a>(schema: &'a Value, ty: &str) -> &'a Value {
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(key)
            && let Some(b) = branches.iter().find(|b| accepts(b).types.contains(&ty))
        {
            return b;
        }
    }
    schema
}

/// Pagination arguments whose out-of-range integers are clamped to the schema's
/// `minimum`/`maximum` rather than refused, as Hermes' handlers clamp them
/// (`normalize_read_pagination`): small models send `offset: 0` to a 1-based
/// `read_file`.
const CLAMPED: [&str; 2] = ["offset", "limit"];

/// Clamp the pagination integers of `args` into their schema's bounds; returns what was
/// adjusted (for the result: "offset 0 -> 1 (minimum 1)"), if anything.
pub fn clamp_pagination(args: &mut Value, schema: &Value) -> Option<String> {
    let (Value::Object(map), Some(Value::Object(props))) = (args, schema.get("properties")) else {
        return None;
    };
    let mut notes = Vec::new();
    for key in CLAMPED {
        let (Some(value), Some(prop)) = (map.get_mut(key), props.get(key)) else {
            continue;
        };
        let Some(n) = value.as_i64() else {
            continue;
        };
        let bound = |name: &str| prop.get(name).and_then(Value::as_i64);
        let (low, high) = (bound("minimum"), bound("maximum"));
        let clamped = match (low, high) {
            (Some(low), _) if n < low => (low, format!("minimum {low}")),
            (_, Some(high)) if n > high => (high, format!("maximum {high}")),
            _ => continue,
        };
        *value = Value::from(clamped.0);
        notes.push(format!("{key} {n} -> {} ({})", clamped.0, clamped.1));
    }
    (!notes.is_empty()).then(|| notes.join("; "))
}

/// Coerce the properties of an argument object in place.
pub fn coerce_args(args: &mut Value, schema: &Value) {
    if let (Value::Object(map), Some(Value::Object(props))) = (args, schema.get("properties")) {
        coerce_object(map, props);
    }
}

fn coerce_object(map: &mut Map<String, Value>, props: &Map<String, Value>) {
    for (key, value) in map.iter_mut() {
        if let Some(prop) = props.get(key) {
            coerce_value(value, prop);
        }
    }
}

fn parse_number(s: &str, integer_only: bool) -> Option<Value> {
    let f: f64 = s.trim().parse().ok()?;
    if !f.is_finite() {
        return None;
    }
    if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 {
        return Some(Value::Number(Number::from(f as i64)));
    }
    if integer_only {
        return None;
    }
    Number::from_f64(f).map(Value::Number)
}

fn coerce_string(s: &str, schema: &Value, acc: &Accepts<'_>) -> Option<Value> {
    let trimmed = s.trim();
    if acc.nullable && trimmed.eq_ignore_ascii_case("null") {
        return Some(Value::Null);
    }
    for ty in &acc.types {
        let converted = match *ty {
            "string" => return None,
            "integer" => parse_number(trimmed, true),
            "number" => parse_number(trimmed, false),
            "boolean" => match trimmed.to_ascii_lowercase().as_str() {
                "true" => Some(Value::Bool(true)),
                "false" => Some(Value::Bool(false)),
                _ => None,
            },
            "object" if trimmed.starts_with('{') => serde_json::from_str::<Value>(trimmed)
                .ok()
                .filter(Value::is_object),
            "array" if trimmed.starts_with('[') => serde_json::from_str::<Value>(trimmed)
                .ok()
                .filter(Value::is_array),
            _ => None,
        };
        if let Some(mut value) = converted {
            coerce_value(&mut value, branch_for(schema, ty));
            return Some(value);
        }
    }
    None
}

/// True when the schema (or one of its union branches) declares `ty`, without allocating.
fn declares(schema: &Value, ty: &str) -> bool {
    let direct = match schema.get("type") {
        Some(Value::String(t)) => t == ty,
        Some(Value::Array(ts)) => ts.iter().any(|t| t.as_str() == Some(ty)),
        _ => false,
    };
    direct
        || ["anyOf", "oneOf"].iter().any(|key| {
            schema
                .get(*key)
                .and_then(Value::as_array)
                .is_some_and(|branches| branches.iter().any(|b| declares(b, ty)))
        })
}

fn coerce_value(value: &mut Value, schema: &Value) {
    // Fast path for the common case: a number, boolean or null only ever changes when it
    // must be wrapped into an array.
    if matches!(value, Value::Number(_) | Value::Bool(_) | Value::Null)
        && !declares(schema, "array")
    {
        return;
    }
    let acc = accepts(schema);
    if acc.types.is_empty() && !acc.nullable {
        return;
    }
    match value {
        Value::String(s) => {
            if let Some(converted) = coerce_string(s, schema, &acc) {
                *value = converted;
            } else if acc.types.contains(&"array") && !acc.types.contains(&"string") {
                let scalar = std::mem::take(value);
                *value = Value::Array(vec![scalar]);
                coerce_value(value, branch_for(schema, "array"));
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = branch_for(schema, "array").get("items") {
                for item in items.iter_mut() {
                    coerce_value(item, item_schema);
                }
            }
        }
        Value::Object(map) => {
            if let Some(Value::Object(props)) = branch_for(schema, "object").get("properties") {
                coerce_object(map, props);
            }
        }
        Value::Number(_) | Value::Bool(_) => {
            let own = if value.is_boolean() {
                "boolean"
            } else {
                "number"
            };
            let fits = acc
                .types
                .iter()
                .any(|t| *t == own || (own == "number" && *t == "integer"));
            if !fits && acc.types.contains(&"array") {
                let scalar = std::mem::take(value);
                *value = Value::Array(vec![scalar]);
            }
        }
        Value::Null => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer"},
                "x": {"type": "number"},
                "flag": {"type": "boolean"},
                "urls": {"type": "array", "items": {"type": "string"}},
                "opt": {"type": ["string", "null"]},
                "obj": {"type": "object", "properties": {"a": {"type": "integer"}}},
                "ids": {"type": "array", "items": {"type": "integer"}},
                "name": {"type": "string"},
                "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}]}
            }
        })
    }

    fn coerced(args: Value) -> Value {
        let mut args = args;
        coerce_args(&mut args, &schema());
        args
    }

    #[test]
    fn pagination_is_clamped_into_the_schema_bounds_and_reported() {
        let schema = json!({"type": "object", "properties": {
            "offset": {"type": "integer", "minimum": 1},
            "limit": {"type": "integer", "maximum": 2000},
            "count": {"type": "integer", "minimum": 1}
        }});
        for (args, want, note) in [
            (
                json!({"offset": 0}),
                json!({"offset": 1}),
                Some("offset 0 -> 1 (minimum 1)"),
            ),
            (
                json!({"limit": 5000}),
                json!({"limit": 2000}),
                Some("limit 5000 -> 2000 (maximum 2000)"),
            ),
            (
                json!({"offset": 3, "limit": 10}),
                json!({"offset": 3, "limit": 10}),
                None,
            ),
            (json!({"count": 0}), json!({"count": 0}), None),
            (json!({"offset": "x"}), json!({"offset": "x"}), None),
        ] {
            let mut got = args.clone();
            assert_eq!(
                clamp_pagination(&mut got, &schema).as_deref(),
                note,
                "{args}"
            );
            assert_eq!(got, want, "{args}");
        }
    }

    #[test]
    fn hermes_verified_example() {
        let got = coerced(json!({
            "n": "42", "x": "1.5", "flag": "TRUE", "urls": "https://a.com",
            "opt": "null", "obj": "{\"a\":1}"
        }));
        assert_eq!(
            got,
            json!({"n": 42, "x": 1.5, "flag": true, "urls": ["https://a.com"], "opt": null, "obj": {"a": 1}})
        );
    }

    #[test]
    fn table() {
        let cases = [
            (json!({"n": "3.0"}), json!({"n": 3})),
            (json!({"n": "3.5"}), json!({"n": "3.5"})),
            (json!({"n": "nan"}), json!({"n": "nan"})),
            (json!({"x": "1e3"}), json!({"x": 1000})),
            (json!({"flag": "yes"}), json!({"flag": "yes"})),
            (json!({"flag": " false "}), json!({"flag": false})),
            (json!({"ids": "[1, \"2\"]"}), json!({"ids": [1, 2]})),
            (json!({"ids": "7"}), json!({"ids": [7]})),
            (json!({"ids": 7}), json!({"ids": [7]})),
            (json!({"urls": ["a", "b"]}), json!({"urls": ["a", "b"]})),
            (json!({"obj": {"a": "5"}}), json!({"obj": {"a": 5}})),
            (json!({"name": "42"}), json!({"name": "42"})),
            (json!({"opt": "text"}), json!({"opt": "text"})),
            (json!({"maybe": "NULL"}), json!({"maybe": null})),
            (json!({"maybe": "9"}), json!({"maybe": 9})),
            (json!({"unknown": "42"}), json!({"unknown": "42"})),
            (json!({"obj": "{broken"}), json!({"obj": "{broken"})),
        ];
        for (input, want) in cases {
            assert_eq!(coerced(input.clone()), want, "input {input}");
        }
    }

    #[test]
    fn non_object_args_untouched() {
        let mut args = json!([1, 2]);
        coerce_args(&mut args, &schema());
        assert_eq!(args, json!([1, 2]));
    }
}
