//! textkit: small, dependable text tools the model otherwise gets wrong by "reading"
//! (counting words, digging into a large JSON document, base64).

mod base64;

use schemars::JsonSchema;
use serde::Deserialize;
use toolhost_plugin_api::prelude::*;

/// Arguments of `text_stats`.
#[derive(Deserialize, JsonSchema)]
struct StatsArgs {
    /// The text to measure.
    text: String,
}

/// Arguments of `json_query`.
#[derive(Deserialize, JsonSchema)]
struct QueryArgs {
    /// A JSON document, as text.
    document: String,
    /// An RFC 6901 JSON Pointer such as `/items/0/name` (empty = the whole document).
    #[serde(default)]
    pointer: String,
}

/// Direction of `base64`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Mode {
    /// Text → base64.
    Encode,
    /// Base64 → text.
    Decode,
}

/// Arguments of `base64`.
#[derive(Deserialize, JsonSchema)]
struct Base64Args {
    /// `encode` or `decode`.
    mode: Mode,
    /// The input.
    text: String,
}

fn text_stats(args: StatsArgs, _ctx: &ToolContext<'_>) -> Result<Value, ToolError> {
    let text = &args.text;
    let longest = text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    Ok(json!({
        "lines": text.lines().count(),
        "words": text.split_whitespace().count(),
        "chars": text.chars().count(),
        "bytes": text.len(),
        "longest_line": longest,
    }))
}

fn json_query(args: QueryArgs, _ctx: &ToolContext<'_>) -> Result<Value, ToolError> {
    let document: Value = match toolhost_plugin_api::serde_json::from_str(&args.document) {
        Ok(doc) => doc,
        Err(e) => return Ok(tool_error(format!("document is not valid JSON: {e}"))),
    };
    if !args.pointer.is_empty() && !args.pointer.starts_with('/') {
        return Ok(tool_error("pointer must be empty or start with '/'"));
    }
    Ok(match document.pointer(&args.pointer) {
        Some(value) => json!({ "found": true, "value": value }),
        None => json!({ "found": false, "value": null }),
    })
}

fn base64(args: Base64Args, _ctx: &ToolContext<'_>) -> Result<Value, ToolError> {
    Ok(match args.mode {
        Mode::Encode => json!({ "text": base64::encode(args.text.as_bytes()) }),
        Mode::Decode => match base64::decode(&args.text) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => json!({ "text": text }),
                Err(_) => tool_error("the decoded bytes are not UTF-8 text"),
            },
            Err(e) => tool_error(e),
        },
    })
}

fn plugin(_host: &Host) -> Plugin {
    Plugin::new()
        .tool(
            Tool::typed("text_stats", "textkit", text_stats)
                .description("Count the lines, words, characters and bytes of a text")
                .emoji("🔢")
                .parallel_safe(true),
        )
        .tool(
            Tool::typed("json_query", "textkit", json_query)
                .description("Extract the value at a JSON Pointer from a JSON document")
                .emoji("🔎")
                .parallel_safe(true),
        )
        .tool(
            Tool::typed("base64", "textkit", base64)
                .description("Encode text as base64, or decode base64 to text")
                .parallel_safe(true),
        )
}

toolhost_plugin_api::export_plugin!(plugin);

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    fn ctx(cancel: &AtomicBool) -> ToolContext<'_> {
        ToolContext::new("{}", cancel)
    }

    #[test]
    fn stats_count_unicode_by_character() {
        let cancel = AtomicBool::new(false);
        let out = text_stats(
            StatsArgs {
                text: "héllo world\nsecond".into(),
            },
            &ctx(&cancel),
        )
        .unwrap();
        assert_eq!(out["lines"], 2);
        assert_eq!(out["words"], 3);
        assert_eq!(out["chars"], 18);
        assert_eq!(out["bytes"], 19);
        assert_eq!(out["longest_line"], 11);
    }

    #[test]
    fn query_finds_and_misses() {
        let cancel = AtomicBool::new(false);
        let doc = r#"{"items":[{"name":"a"}]}"#.to_string();
        let hit = json_query(
            QueryArgs {
                document: doc.clone(),
                pointer: "/items/0/name".into(),
            },
            &ctx(&cancel),
        )
        .unwrap();
        assert_eq!(hit, json!({"found": true, "value": "a"}));
        let miss = json_query(
            QueryArgs {
                document: doc,
                pointer: "/nope".into(),
            },
            &ctx(&cancel),
        )
        .unwrap();
        assert_eq!(miss["found"], false);
        let bad = json_query(
            QueryArgs {
                document: "{".into(),
                pointer: String::new(),
            },
            &ctx(&cancel),
        )
        .unwrap();
        assert!(bad["error"].as_str().unwrap().contains("not valid JSON"));
    }
}
