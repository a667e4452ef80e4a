//! Checking a tool's JSON schema against its argument struct (tests only; the
//! `test-support` feature makes it available to the host's tests, whose agent-loop
//! tools answer schemas defined here).
//!
//! [`check`] builds arguments from the schema — every property with an example value of
//! its declared type, and the required properties alone — and reads them into the
//! struct: every property must be a field the struct reads (nested objects too, by
//! `serde_ignored`), every field must be a property (or listed as accepted but not
//! advertised, like Hermes' hidden handler parameters), the example values must fit the
//! field types, and the required properties alone must be enough.

use std::collections::BTreeSet;

use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use serde_json::{Map, Value, json};

/// Check `parameters` (a tool's object schema) against the argument struct `T`;
/// `unadvertised` are fields `T` accepts that the schema leaves out on purpose.
pub fn check<T: DeserializeOwned>(parameters: &Value, unadvertised: &[&str]) -> Result<(), String> {
    let properties: BTreeSet<&str> = parameters
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let fields: BTreeSet<&str> = field_names::<T>().into_iter().collect();
    let not_read: Vec<&&str> = properties.difference(&fields).collect();
    if !not_read.is_empty() {
        return Err(format!(
            "schema properties the struct does not read: {not_read:?}"
        ));
    }
    let extra: Vec<&&str> = fields
        .difference(&properties)
        .filter(|f| !unadvertised.contains(f))
        .collect();
    if !extra.is_empty() {
        return Err(format!(
            "struct fields the schema does not declare: {extra:?}"
        ));
    }
    let full = example(parameters);
    let mut ignored = Vec::new();
    let parsed: Result<T, _> =
        serde_ignored::deserialize(full.clone(), |path| ignored.push(path.to_string()));
    parsed.map_err(|e| format!("example arguments {full} do not fit: {e}"))?;
    if !ignored.is_empty() {
        return Err(format!(
            "nested properties the struct does not read: {ignored:?}"
        ));
    }
    let required = required_only(parameters, &full);
    serde_json::from_value::<T>(required.clone())
        .map_err(|e| format!("the required arguments alone ({required}) do not fit: {e}"))?;
    Ok(())
}

/// An example value for a schema node: the first `enum` value, or a value of the first
/// declared type (objects with every property, arrays with one item).
pub fn example(schema: &Value) -> Value {
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    let ty = match schema.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(types)) => types.first().and_then(Value::as_str).unwrap_or("string"),
        _ if schema.get("properties").is_some() => "object",
        _ => "string",
    };
    match ty {
        "integer" | "number" => schema.get("minimum").cloned().unwrap_or(json!(1)),
        "boolean" => json!(true),
        "array" => match schema.get("items") {
            Some(items) => json!([example(items)]),
            None => json!([]),
        },
        "object" => Value::Object(
            schema
                .get("properties")
                .and_then(Value::as_object)
                .map(|props| props.iter().map(|(k, v)| (k.clone(), example(v))).collect())
                .unwrap_or_default(),
        ),
        "null" => Value::Null,
        _ => json!("x"),
    }
}

/// `full` reduced to the schema's required properties.
fn required_only(parameters: &Value, full: &Value) -> Value {
    let required: Vec<&str> = parameters
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = Map::new();
    for name in required {
        if let Some(value) = full.get(name) {
            out.insert(name.to_string(), value.clone());
        }
    }
    Value::Object(out)
}

/// The field names a derived `Deserialize` struct reads (what the derive passes to
/// `deserialize_struct`).
pub fn field_names<T: DeserializeOwned>() -> Vec<&'static str> {
    let mut fields = Vec::new();
    let _ = T::deserialize(FieldProbe(&mut fields));
    fields
}

/// A deserializer that only records the fields a struct asks for.
struct FieldProbe<'a>(&'a mut Vec<&'static str>);

impl<'de> Deserializer<'de> for FieldProbe<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.extend_from_slice(fields);
        Err(de::Error::custom("fields recorded"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
        identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Args {
        name: String,
        #[serde(default)]
        count: Option<i64>,
        #[serde(default)]
        items: Vec<Item>,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Item {
        id: String,
    }

    fn schema(extra: Value) -> Value {
        let mut s = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "count": {"type": "integer", "minimum": 0},
                "items": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"}}}}
            },
            "required": ["name"]
        });
        if let (Some(props), Value::Object(extra)) = (s["properties"].as_object_mut(), extra) {
            props.extend(extra);
        }
        s
    }

    #[test]
    fn field_names_are_read_from_the_derive() {
        assert_eq!(field_names::<Args>(), ["name", "count", "items"]);
    }

    #[test]
    fn a_matching_schema_passes() {
        check::<Args>(&schema(json!({})), &[]).unwrap();
    }

    #[test]
    fn a_property_the_struct_does_not_read_fails() {
        let err = check::<Args>(&schema(json!({"extra": {"type": "string"}})), &[]).unwrap_err();
        assert!(err.contains("extra"), "{err}");
    }

    #[test]
    fn a_nested_property_the_struct_does_not_read_fails() {
        let mut s = schema(json!({}));
        s["properties"]["items"]["items"]["properties"]["label"] = json!({"type": "string"});
        let err = check::<Args>(&s, &[]).unwrap_err();
        assert!(err.contains("label"), "{err}");
    }

    #[test]
    fn a_field_the_schema_does_not_declare_fails_unless_listed() {
        let mut s = schema(json!({}));
        s["properties"].as_object_mut().unwrap().remove("count");
        assert!(check::<Args>(&s, &[]).unwrap_err().contains("count"));
        check::<Args>(&s, &["count"]).unwrap();
    }

    #[test]
    fn a_mistyped_field_fails() {
        let mut s = schema(json!({}));
        s["properties"]["count"] = json!({"type": "string"});
        assert!(check::<Args>(&s, &[]).unwrap_err().contains("do not fit"));
    }

    #[test]
    fn an_optional_property_the_struct_requires_fails() {
        let mut s = schema(json!({}));
        s["required"] = json!([]);
        let err = check::<Args>(&s, &[]).unwrap_err();
        assert!(err.contains("required arguments alone"), "{err}");
    }
}
