//! Make tool parameter schemas acceptable to strict providers (llama.cpp's grammar
//! builder, Gemini, Anthropic, OpenAI's Codex endpoint, draft-07 validators), following
//! Hermes' sanitizer (docs/hermes/toolsets-and-definitions.md, section 7):
//!
//! - a bare string where a schema belongs becomes `{"type": X}` (`"object"` and unknown
//!   strings become `{"type":"object","properties":{}}`);
//! - a `type` array becomes one type (+ `nullable: true` when it listed `null`), or an
//!   `anyOf` of single types when several non-null types were listed;
//! - object nodes get `properties: {}` when missing; `required` entries that name no
//!   property are pruned (the key is dropped when none remain);
//! - a nullable `anyOf`/`oneOf` with exactly one non-null branch collapses to that
//!   branch with `nullable: true`, carrying `title`/`description`/`default`/`examples`;
//! - `default` is removed from any node that has `$ref`;
//! - at the top level `allOf`/`anyOf`/`oneOf`/`enum`/`not` are removed and the node is
//!   forced to `type: object` with a `properties` object; non-object parameters become
//!   `{"type":"object","properties":{}}`;
//! - `required`, `enum`, `examples` (and every other value that is not a schema) are
//!   never rewritten.
//!
//! Differences from Hermes, all in the direction of "valid for strict providers":
//! recursion follows only schema-valued keywords (Hermes also walks `default`/`const`
//! values, turning `"default": ["a"]` into `[{"type":"object",...}]`); the top-level
//! object rule runs last (Hermes runs it before the nullable collapse, which can leave
//! a top level of another type); `nullable` is dropped from the top level; `required`
//! that is not a list (draft-03 booleans) is dropped and duplicates are removed.

use serde_json::{Map, Value, json};

/// Keywords whose value is one schema.
const SCHEMA_KEYWORDS: &[&str] = &[
    "items",
    "additionalProperties",
    "additionalItems",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "propertyNames",
    "contentSchema",
    "not",
    "if",
    "then",
    "else",
];

/// Keywords whose value is an array of schemas.
const SCHEMA_ARRAY_KEYWORDS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];

/// Keywords whose value maps names to schemas.
const SCHEMA_MAP_KEYWORDS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Removed from the top level of the parameters (strict backends reject them there).
const TOP_LEVEL_FORBIDDEN: &[&str] = &["allOf", "anyOf", "oneOf", "enum", "not"];

/// Metadata a collapsed nullable union carries over to its surviving branch.
const UNION_METADATA: &[&str] = &["title", "description", "default", "examples"];

const JSON_TYPES: &[&str] = &[
    "object", "string", "number", "integer", "boolean", "array", "null",
];

fn empty_object_schema() -> Value {
    json!({"type": "object", "properties": {}})
}

/// Sanitize one function definition (`{"name","description","parameters"}`) in place.
pub fn sanitize_function(function: &mut Map<String, Value>) {
    match function.get_mut("parameters") {
        Some(slot) => *slot = sanitize_parameters(std::mem::take(slot)),
        None => {
            function.insert("parameters".into(), empty_object_schema());
        }
    }
}

/// Sanitize a tool's parameters schema.
pub fn sanitize_parameters(parameters: Value) -> Value {
    if !parameters.is_object() {
        return empty_object_schema();
    }
    let mut top = parameters;
    sanitize_node(&mut top);
    let Value::Object(map) = &mut top else {
        return empty_object_schema();
    };
    remove_keys(map, |key| {
        key == "nullable" || TOP_LEVEL_FORBIDDEN.contains(&key)
    });
    map.insert("type".into(), Value::String("object".into()));
    if !map.get("properties").is_some_and(Value::is_object) {
        map.insert("properties".into(), Value::Object(Map::new()));
    }
    prune_required(map);
    top
}

/// Sanitize a node in a schema position.
fn sanitize_node(node: &mut Value) {
    match node {
        Value::String(name) => *node = bare_string_schema(name),
        Value::Array(items) => items.iter_mut().for_each(sanitize_node),
        Value::Object(map) => {
            if let Some(replacement) = sanitize_object(map) {
                *node = replacement;
            }
        }
        // `true`/`false` schemas and anything else: left alone.
        _ => {}
    }
}

fn bare_string_schema(name: &str) -> Value {
    match name {
        "object" => empty_object_schema(),
        t if JSON_TYPES.contains(&t) => json!({"type": t}),
        _ => empty_object_schema(),
    }
}

/// Sanitize an object node; returns a replacement when a nullable union collapsed.
///
/// One walk over the node's keys (schema objects are small; hashing every keyword
/// the sanitizer knows would cost more than the walk).
fn sanitize_object(map: &mut Map<String, Value>) -> Option<Value> {
    normalize_type_array(map);
    let mut malformed_map_keyword = false;
    let (mut is_object, mut has_properties, mut has_required) = (false, false, false);
    let (mut has_union, mut has_ref) = (false, false);
    for (key, value) in map.iter_mut() {
        let key = key.as_str();
        if SCHEMA_MAP_KEYWORDS.contains(&key) {
            match value {
                Value::Object(children) => {
                    children.values_mut().for_each(sanitize_node);
                    has_properties |= key == "properties";
                }
                _ => malformed_map_keyword = true,
            }
        } else if SCHEMA_KEYWORDS.contains(&key) {
            if !value.is_boolean() {
                sanitize_node(value);
            }
        } else if SCHEMA_ARRAY_KEYWORDS.contains(&key) {
            if let Value::Array(children) = value {
                children.iter_mut().for_each(sanitize_node);
            }
            has_union |= key == "anyOf" || key == "oneOf";
        } else {
            match key {
                "type" => is_object = value.as_str() == Some("object"),
                "required" => has_required = true,
                "$ref" => has_ref = true,
                "dependencies" => {
                    if let Value::Object(deps) = value {
                        // Draft-07: a schema, or a list of property names (left alone).
                        deps.values_mut()
                            .filter(|v| v.is_object())
                            .for_each(sanitize_node);
                    }
                }
                _ => {}
            }
        }
    }
    if malformed_map_keyword {
        map.retain(|key, value| value.is_object() || !SCHEMA_MAP_KEYWORDS.contains(&key.as_str()));
    }
    if is_object && !has_properties {
        map.insert("properties".into(), Value::Object(Map::new()));
    }
    if has_required {
        prune_required(map);
    }
    if has_union && let Some(mut replacement) = collapse_nullable_union(map) {
        if let Value::Object(r) = &mut replacement {
            strip_ref_default(r);
        }
        return Some(replacement);
    }
    if has_ref {
        strip_ref_default(map);
    }
    None
}

/// Remove keys in place, keeping the order of the others.
fn remove_keys(map: &mut Map<String, Value>, doomed: impl Fn(&str) -> bool) {
    if map.keys().any(|k| doomed(k)) {
        map.retain(|key, _| !doomed(key));
    }
}

/// `type: [..]` → one type (+ `nullable`), or an `anyOf` of single types.
fn normalize_type_array(map: &mut Map<String, Value>) {
    let Some(Value::Array(types)) = map.get("type") else {
        return;
    };
    let has_null = types.iter().any(|t| t.as_str() == Some("null"));
    let mut non_null: Vec<String> = Vec::new();
    for t in types.iter().filter_map(Value::as_str) {
        if t != "null" && !non_null.iter().any(|seen| seen == t) {
            non_null.push(t.to_string());
        }
    }
    match non_null.as_slice() {
        [] => {
            let only = if has_null { "null" } else { "object" };
            map.insert("type".into(), Value::String(only.into()));
            return;
        }
        [single] => {
            map.insert("type".into(), Value::String(single.clone()));
        }
        several => {
            remove_keys(map, |key| key == "type");
            let union: Vec<Value> = several.iter().map(|t| json!({"type": t})).collect();
            if map.contains_key("anyOf") {
                // Keep the existing union; both must hold.
                let all_of = map
                    .entry("allOf")
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(all) = all_of {
                    all.push(json!({"anyOf": union}));
                } else {
                    *all_of = json!([{"anyOf": union}]);
                }
            } else {
                map.insert("anyOf".into(), Value::Array(union));
            }
        }
    }
    if has_null {
        map.entry("nullable").or_insert(Value::Bool(true));
    }
}

/// Keep only `required` entries that name a property (objects only); drop a
/// `required` that is not a list.
fn prune_required(map: &mut Map<String, Value>) {
    match map.get("required") {
        None => return,
        Some(Value::Array(_)) => {}
        Some(_) => {
            remove_keys(map, |key| key == "required");
            return;
        }
    }
    if map.get("type").and_then(Value::as_str) != Some("object") {
        return;
    }
    let empty = Map::new();
    let properties = match map.get("properties") {
        Some(Value::Object(p)) => p,
        _ => &empty,
    };
    let mut kept: Vec<Value> = Vec::new();
    if let Some(Value::Array(required)) = map.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if properties.contains_key(name) && !kept.iter().any(|k| k.as_str() == Some(name)) {
                kept.push(Value::String(name.to_string()));
            }
        }
    }
    if kept.is_empty() {
        remove_keys(map, |key| key == "required");
    } else {
        map.insert("required".into(), Value::Array(kept));
    }
}

/// `anyOf`/`oneOf` of one non-null branch plus `{"type":"null"}` → that branch.
fn collapse_nullable_union(map: &Map<String, Value>) -> Option<Value> {
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(variants)) = map.get(key) else {
            continue;
        };
        let is_null = |v: &Value| v.get("type").and_then(Value::as_str) == Some("null");
        let non_null: Vec<&Value> = variants.iter().filter(|v| !is_null(v)).collect();
        if non_null.len() != 1 || non_null.len() == variants.len() {
            continue;
        }
        let mut replacement = match non_null[0] {
            Value::Object(branch) => branch.clone(),
            _ => Map::new(),
        };
        replacement.entry("nullable").or_insert(Value::Bool(true));
        let has_ref = replacement.contains_key("$ref");
        for meta in UNION_METADATA {
            if *meta == "default" && has_ref {
                continue;
            }
            if let Some(value) = map.get(*meta)
                && !replacement.contains_key(*meta)
            {
                replacement.insert((*meta).to_string(), value.clone());
            }
        }
        return Some(Value::Object(replacement));
    }
    None
}

fn strip_ref_default(map: &mut Map<String, Value>) {
    if map.contains_key("$ref") {
        remove_keys(map, |key| key == "default");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (rule, parameters before, parameters after)
    fn cases() -> Vec<(&'static str, Value, Value)> {
        vec![
            (
                "non-object parameters become an empty object schema",
                json!("object"),
                json!({"type": "object", "properties": {}}),
            ),
            (
                "null parameters become an empty object schema",
                Value::Null,
                json!({"type": "object", "properties": {}}),
            ),
            (
                "top level forced to type object with properties",
                json!({"type": "string"}),
                json!({"type": "object", "properties": {}}),
            ),
            (
                "missing top-level type is added",
                json!({"properties": {"a": {"type": "string"}}}),
                json!({"properties": {"a": {"type": "string"}}, "type": "object"}),
            ),
            (
                "bare string property schemas become type objects",
                json!({"type": "object", "properties": {
                    "a": "string", "b": "object", "c": "integer", "d": "whatever"}}),
                json!({"type": "object", "properties": {
                    "a": {"type": "string"},
                    "b": {"type": "object", "properties": {}},
                    "c": {"type": "integer"},
                    "d": {"type": "object", "properties": {}}}}),
            ),
            (
                "bare string additionalProperties and items",
                json!({"type": "object", "properties": {
                    "m": {"type": "object", "additionalProperties": "object"},
                    "l": {"type": "array", "items": "string"}}}),
                json!({"type": "object", "properties": {
                    "m": {"type": "object", "additionalProperties": {"type": "object", "properties": {}}, "properties": {}},
                    "l": {"type": "array", "items": {"type": "string"}}}}),
            ),
            (
                "boolean additionalProperties is kept",
                json!({"type": "object", "properties": {}, "additionalProperties": false}),
                json!({"type": "object", "properties": {}, "additionalProperties": false}),
            ),
            (
                "type array with null becomes one type plus nullable",
                json!({"type": "object", "properties": {"a": {"type": ["string", "null"]}}}),
                json!({"type": "object", "properties": {"a": {"type": "string", "nullable": true}}}),
            ),
            (
                "type array of several types becomes anyOf",
                json!({"type": "object", "properties": {"a": {"type": ["number", "string", "null"], "description": "n"}}}),
                json!({"type": "object", "properties": {"a": {
                    "description": "n",
                    "anyOf": [{"type": "number"}, {"type": "string"}],
                    "nullable": true}}}),
            ),
            (
                "all-null type array becomes type null; empty becomes object",
                json!({"type": "object", "properties": {"a": {"type": ["null"]}, "b": {"type": []}}}),
                json!({"type": "object", "properties": {
                    "a": {"type": "null"},
                    "b": {"type": "object", "properties": {}}}}),
            ),
            (
                "object type array gets properties",
                json!({"type": "object", "properties": {"a": {"type": ["object", "null"]}}}),
                json!({"type": "object", "properties": {"a": {"type": "object", "nullable": true, "properties": {}}}}),
            ),
            (
                "nested object without properties gets them",
                json!({"type": "object", "properties": {"o": {"type": "object"}}}),
                json!({"type": "object", "properties": {"o": {"type": "object", "properties": {}}}}),
            ),
            (
                "required entries not in properties are pruned",
                json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "ghost", "a"]}),
                json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}),
            ),
            (
                "required with no valid entry is dropped",
                json!({"type": "object", "properties": {}, "required": ["ghost"]}),
                json!({"type": "object", "properties": {}}),
            ),
            (
                "nullable anyOf collapses to its branch with metadata",
                json!({"type": "object", "properties": {"a": {
                    "anyOf": [{"type": "string"}, {"type": "null"}],
                    "title": "A", "description": "d", "default": null, "examples": ["x"]}}}),
                json!({"type": "object", "properties": {"a": {
                    "type": "string", "nullable": true,
                    "title": "A", "description": "d", "default": null, "examples": ["x"]}}}),
            ),
            (
                "nullable oneOf collapses; branch metadata wins",
                json!({"type": "object", "properties": {"a": {
                    "oneOf": [{"type": "null"}, {"type": "integer", "description": "inner"}],
                    "description": "outer"}}}),
                json!({"type": "object", "properties": {"a": {
                    "type": "integer", "description": "inner", "nullable": true}}}),
            ),
            (
                "a real union is kept",
                json!({"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}}),
                json!({"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}}),
            ),
            (
                "collapse onto a $ref drops the default",
                json!({"type": "object", "properties": {"a": {
                    "anyOf": [{"$ref": "#/$defs/Foo"}, {"type": "null"}], "default": null}},
                    "$defs": {"Foo": {"type": "object", "properties": {"x": {"type": "string"}}}}}),
                json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/Foo", "nullable": true}},
                    "$defs": {"Foo": {"type": "object", "properties": {"x": {"type": "string"}}}}}),
            ),
            (
                "default beside $ref is removed",
                json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/Foo", "default": {"x": "1"}}}}),
                json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/Foo"}}}),
            ),
            (
                "top-level combinators and enum are removed",
                json!({"type": "object", "properties": {"a": {"type": "string"}},
                    "allOf": [{"if": {}, "then": {"required": ["a"]}}],
                    "anyOf": [{}], "oneOf": [{}], "enum": [1], "not": {}}),
                json!({"type": "object", "properties": {"a": {"type": "string"}}}),
            ),
            (
                "nested combinators are kept",
                json!({"type": "object", "properties": {"a": {"allOf": [{"type": "string"}], "not": {"enum": ["x"]}}}}),
                json!({"type": "object", "properties": {"a": {"allOf": [{"type": "string"}], "not": {"enum": ["x"]}}}}),
            ),
            (
                "required, enum, examples, default and const values are never rewritten",
                json!({"type": "object", "properties": {"path": {
                    "type": "string", "enum": ["object", "path"], "examples": ["string"],
                    "default": ["object"], "const": "string"}}, "required": ["path"]}),
                json!({"type": "object", "properties": {"path": {
                    "type": "string", "enum": ["object", "path"], "examples": ["string"],
                    "default": ["object"], "const": "string"}}, "required": ["path"]}),
            ),
            (
                "$defs and definitions are sanitized",
                json!({"type": "object", "properties": {}, "$defs": {"A": "string"}, "definitions": {"B": {"type": ["integer", "null"]}}}),
                json!({"type": "object", "properties": {}, "$defs": {"A": {"type": "string"}}, "definitions": {"B": {"type": "integer", "nullable": true}}}),
            ),
            (
                "top-level nullable union collapses and stays an object",
                json!({"anyOf": [{"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}, {"type": "null"}]}),
                json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}),
            ),
            (
                "draft-03 boolean required is dropped",
                json!({"type": "object", "properties": {"a": {"type": "string", "required": true}}}),
                json!({"type": "object", "properties": {"a": {"type": "string"}}}),
            ),
        ]
    }

    #[test]
    fn every_rule_before_and_after() {
        for (rule, before, after) in cases() {
            assert_eq!(sanitize_parameters(before), after, "rule: {rule}");
        }
    }

    #[test]
    fn sanitizing_twice_changes_nothing() {
        for (rule, before, _) in cases() {
            let once = sanitize_parameters(before);
            assert_eq!(sanitize_parameters(once.clone()), once, "rule: {rule}");
        }
    }

    #[test]
    fn sanitize_function_fills_missing_parameters() {
        let mut function = Map::new();
        function.insert("name".into(), json!("t"));
        sanitize_function(&mut function);
        assert_eq!(
            Value::Object(function),
            json!({"name": "t", "parameters": {"type": "object", "properties": {}}})
        );
    }

    #[test]
    fn output_keys_are_deterministic() {
        // serde_json is built without `preserve_order` (faster dispatch): keys come out
        // sorted, so the same schema always serializes to the same text.
        let before = json!({"anyOf": [{}], "properties": {"z": {"type": "string"}, "a": {"type": ["integer", "null"]}},
            "description": "d", "type": "object", "required": ["z"]});
        let after = sanitize_parameters(before);
        let keys: Vec<&str> = after
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["description", "properties", "required", "type"]);
    }

    #[test]
    fn deep_nesting_in_arrays_is_sanitized() {
        let before = json!({"type": "object", "properties": {"rows": {
            "type": "array",
            "items": {"type": "object", "properties": {"cells": {"type": "array", "items": {"type": ["string", "null"]}}}}}}});
        let after = sanitize_parameters(before);
        assert_eq!(
            after["properties"]["rows"]["items"]["properties"]["cells"]["items"],
            json!({"type": "string", "nullable": true})
        );
    }
}
