//! The Tool Search bridge: when the schemas of the deferrable tools (every tool that is
//! not a core tool — MCP and plugin tools) would take `[agent] tool_search_threshold_pct`
//! percent of the model's context or more (estimated at 4 characters per token), they
//! are left out of the `tools` array and three bridge tools take their place:
//! `tool_search` (BM25 over names, descriptions and parameter names, with a name
//! substring fallback), `tool_describe` (one tool's full schema) and `tool_call` (run a
//! deferred tool; unwrapped to the real call before the dispatch pipeline, so hooks and
//! approval see the real tool). `[agent] tool_search = "off"` never activates it, `"on"`
//! always does when there is a deferrable tool. Deferred tools may also be called
//! directly by name (Hermes answers "does not exist" then; docs/hermes/agent-loop.md).
//! In `auto`, when the tools left in the array would still take more than 40 % of the
//! context (a small local model's 2,048 or 8,192 tokens), core tools are deferred too,
//! largest first, until they fit (Hermes defers only MCP and plugin tools).

use std::collections::{BTreeSet, HashMap};

use serde::Deserialize;
use serde_json::{Value, json};
use tools_core::tools::args::{lenient, parse};

use super::assemble::ToolOffer;
use crate::toolsets::is_core_tool;

/// The bridge tools' names.
pub const BRIDGE_TOOLS: [&str; 3] = ["tool_search", "tool_describe", "tool_call"];
/// Matches returned by default / at most.
const DEFAULT_LIMIT: usize = 5;
const MAX_LIMIT: usize = 20;
/// Characters of a description shown in search results.
const DESCRIPTION_CHARS: usize = 400;

/// `tool_search`'s arguments.
#[derive(Debug, Deserialize)]
pub struct SearchArgs {
    /// Keywords (blank: "query is required").
    #[serde(default, deserialize_with = "lenient::string")]
    query: Option<String>,
    /// Matches returned (default 5, at most 20).
    #[serde(default, deserialize_with = "lenient::int")]
    limit: Option<i64>,
}

/// `tool_describe`'s arguments.
#[derive(Debug, Deserialize)]
pub struct DescribeArgs {
    /// The deferred tool.
    #[serde(default, deserialize_with = "lenient::string")]
    name: Option<String>,
}

/// `tool_call`'s arguments.
#[derive(Debug, Default, Deserialize)]
pub struct CallArgs {
    /// The deferred tool to run.
    #[serde(default, deserialize_with = "lenient::string")]
    name: Option<String>,
    /// Its arguments: an object, or JSON text of one (`null` or absent: none).
    #[serde(default)]
    arguments: Option<Value>,
}

/// The deferred tools of an agent whose offer was split.
#[derive(Clone, Debug, Default)]
pub struct ToolSearch {
    deferred: Vec<Value>,
    names: BTreeSet<String>,
}

/// `offer` as the model sees it, and the bridge's catalogue when it is active.
/// `mode` is `auto`, `on` or `off`.
pub fn assemble(
    offer: ToolOffer,
    context_tokens: usize,
    mode: &str,
    threshold_pct: f64,
) -> (ToolOffer, Option<ToolSearch>) {
    let (mut deferrable, mut visible): (Vec<Value>, Vec<Value>) = offer
        .definitions
        .iter()
        .cloned()
        .partition(|d| !is_core_tool(name_of(d)) && !BRIDGE_TOOLS.contains(&name_of(d)));
    let tokens = schema_tokens(&deferrable);
    let mut active = match mode {
        "off" => false,
        "on" => !deferrable.is_empty(),
        _ => {
            !deferrable.is_empty() && tokens as f64 >= context_tokens as f64 * threshold_pct / 100.0
        }
    };
    if mode != "on" && mode != "off" {
        // A catalogue that does not fit even so: core tools go too, largest first.
        let room = context_tokens * FIT_PCT / 100;
        let bridge = schema_tokens(&bridge_schemas(0));
        let mut shown_tokens = schema_tokens(&visible);
        let mut by_size: Vec<usize> = (0..visible.len()).collect();
        by_size.sort_by_key(|&i| std::cmp::Reverse(visible[i].to_string().len()));
        let mut moved = BTreeSet::new();
        for i in by_size {
            if shown_tokens + bridge <= room {
                break;
            }
            shown_tokens -= visible[i].to_string().len() / 4;
            moved.insert(i);
        }
        if !moved.is_empty() {
            active = true;
            let (gone, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut visible)
                .into_iter()
                .enumerate()
                .partition(|(i, _)| moved.contains(i));
            deferrable.extend(gone.into_iter().map(|(_, d)| d));
            visible = kept.into_iter().map(|(_, d)| d).collect();
        }
    }
    if !active {
        return (offer, None);
    }
    tracing::info!(deferred = deferrable.len(), tokens, "tool search active");
    let search = ToolSearch {
        names: deferrable.iter().map(|d| name_of(d).to_string()).collect(),
        deferred: deferrable,
    };
    let mut definitions = visible;
    definitions.extend(bridge_schemas(search.deferred.len()));
    let mut names: BTreeSet<String> = offer.names;
    names.extend(BRIDGE_TOOLS.iter().map(|s| s.to_string()));
    let shown = ToolOffer {
        definitions,
        names,
        from_mcp: offer.from_mcp,
    };
    (shown, Some(search))
}

/// The share of the context (percent) the offered tool schemas may take in `auto` mode
/// before core tools are deferred as well (docs/model-servers.md, "Context").
const FIT_PCT: usize = 40;

/// Estimated tokens of `definitions` (4 characters per token).
fn schema_tokens(definitions: &[Value]) -> usize {
    definitions
        .iter()
        .map(|d| d.to_string().len())
        .sum::<usize>()
        / 4
}

fn name_of(definition: &Value) -> &str {
    definition
        .pointer("/function/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

impl ToolSearch {
    /// True when `name` is a deferred tool.
    pub fn contains(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    /// Answer `tool_search`.
    pub fn search(&self, args: &Value) -> Value {
        let args: SearchArgs = match parse(args.clone()) {
            Ok(args) => args,
            Err(err) => return err.to_result(),
        };
        let query = args.query.as_deref().unwrap_or_default().trim();
        if query.is_empty() {
            return json!({"error": "query is required"});
        }
        let limit = args
            .limit
            .and_then(|l| usize::try_from(l).ok())
            .map_or(DEFAULT_LIMIT, |l| l.clamp(1, MAX_LIMIT));
        let docs: Vec<Vec<String>> = self.deferred.iter().map(search_tokens).collect();
        let query_tokens = tokenize(query);
        let mut scored: Vec<(f64, usize)> = bm25(&query_tokens, &docs)
            .into_iter()
            .enumerate()
            .filter(|(_, s)| *s > 0.0)
            .map(|(i, s)| (s, i))
            .collect();
        if scored.is_empty() {
            let lower = query.to_lowercase();
            scored = self
                .deferred
                .iter()
                .enumerate()
                .filter(|(_, d)| name_of(d).to_lowercase().contains(&lower))
                .map(|(i, _)| (0.1, i))
                .collect();
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let matches: Vec<Value> = scored
            .into_iter()
            .take(limit)
            .map(|(_, i)| {
                let d = &self.deferred[i];
                let description: String = d
                    .pointer("/function/description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .chars()
                    .take(DESCRIPTION_CHARS)
                    .collect();
                json!({"name": name_of(d), "description": description})
            })
            .collect();
        json!({"query": query, "total_available": self.deferred.len(), "matches": matches})
    }

    /// Answer `tool_describe`.
    pub fn describe(&self, args: &Value) -> Value {
        let args: DescribeArgs = match parse(args.clone()) {
            Ok(args) => args,
            Err(err) => return err.to_result(),
        };
        let name = args.name.as_deref().unwrap_or_default().trim();
        if name.is_empty() {
            return json!({"error": "name is required"});
        }
        match self.deferred.iter().find(|d| name_of(d) == name) {
            Some(d) => json!({
                "name": name,
                "description": d.pointer("/function/description").cloned().unwrap_or(json!("")),
                "parameters": d.pointer("/function/parameters").cloned().unwrap_or(json!({})),
            }),
            None => json!({"error": format!(
                "'{name}' is not a deferred tool. If it is in your tools list, call it directly; \
                 otherwise check the spelling against tool_search."
            )}),
        }
    }

    /// The real call behind a `tool_call`: its name and argument text.
    pub fn unwrap_call(&self, arguments: &str) -> Result<(String, String), String> {
        // Text that is not a JSON object reads as no arguments ("requires a 'name'").
        let args: CallArgs = serde_json::from_str::<Value>(arguments)
            .ok()
            .and_then(|value| parse(value).ok())
            .unwrap_or_default();
        let name = args.name.as_deref().unwrap_or_default().trim();
        if name.is_empty() {
            return Err("tool_call requires a 'name' argument".into());
        }
        if BRIDGE_TOOLS.contains(&name) {
            return Err(format!(
                "tool_call cannot invoke '{name}' (it is itself a bridge tool)"
            ));
        }
        if !self.contains(name) {
            return Err(format!(
                "'{name}' is not available in this session. Use tool_search to find tools you can call."
            ));
        }
        let inner = match args.arguments {
            None => json!({}),
            Some(Value::String(text)) => serde_json::from_str(&text)
                .map_err(|e| format!("tool_call 'arguments' is not valid JSON: {e}"))?,
            Some(other) => other,
        };
        if !inner.is_object() {
            return Err("tool_call 'arguments' must be an object".into());
        }
        Ok((name.to_string(), inner.to_string()))
    }
}

fn tokenize(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn search_tokens(definition: &Value) -> Vec<String> {
    let name = name_of(definition);
    let description = definition
        .pointer("/function/description")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let params: Vec<&str> = definition
        .pointer("/function/parameters/properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();
    tokenize(&format!("{name} {description} {}", params.join(" ")))
}

/// Okapi BM25 (k1 = 1.5, b = 0.75) of `query` against each document.
fn bm25(query: &[String], docs: &[Vec<String>]) -> Vec<f64> {
    let n = docs.len() as f64;
    let avg = docs.iter().map(Vec::len).sum::<usize>() as f64 / n.max(1.0);
    let mut df: HashMap<&str, f64> = HashMap::new();
    for doc in docs {
        let unique: BTreeSet<&str> = doc.iter().map(String::as_str).collect();
        for t in unique {
            *df.entry(t).or_default() += 1.0;
        }
    }
    docs.iter()
        .map(|doc| {
            let len = doc.len() as f64;
            query
                .iter()
                .map(|q| {
                    let tf = doc.iter().filter(|t| *t == q).count() as f64;
                    if tf == 0.0 {
                        return 0.0;
                    }
                    let d = df.get(q.as_str()).copied().unwrap_or(0.0);
                    let idf = ((n - d + 0.5) / (d + 0.5) + 1.0).ln();
                    idf * tf * 2.5 / (tf + 1.5 * (0.25 + 0.75 * len / avg.max(1.0)))
                })
                .sum()
        })
        .collect()
}

fn bridge_schemas(deferred: usize) -> Vec<Value> {
    vec![
        json!({"type": "function", "function": {
            "name": "tool_search",
            "description": format!("Search {deferred} additional tools that are loaded on demand. Returns up to `limit` matches with name and description. Follow with `tool_describe` to load a tool's full parameter schema, then `tool_call` to invoke it. Tools already in your tools list do not need to be searched."),
            "parameters": {"type": "object", "properties": {
                "query": {"type": "string", "description": "Keywords describing the capability you need (e.g. 'create github issue')."},
                "limit": {"type": "integer", "description": "Maximum number of results to return. Default 5."}
            }, "required": ["query"]}
        }}),
        json!({"type": "function", "function": {
            "name": "tool_describe",
            "description": "Load the full JSON schema for one tool returned by `tool_search`. Required before `tool_call` if the tool's parameters are unknown.",
            "parameters": {"type": "object", "properties": {
                "name": {"type": "string", "description": "Exact tool name (as returned by tool_search)."}
            }, "required": ["name"]}
        }}),
        json!({"type": "function", "function": {
            "name": "tool_call",
            "description": "Invoke a deferred tool by name with the given arguments. Argument shape matches the tool's schema (see `tool_describe`). Policy, hooks, and approvals run exactly as for any directly-listed tool.",
            "parameters": {"type": "object", "properties": {
                "name": {"type": "string", "description": "Exact tool name to invoke."},
                "arguments": {"type": "object", "description": "Arguments for the tool, matching its schema."}
            }, "required": ["name", "arguments"]}
        }}),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bridge_argument_structs_match_their_schemas() {
        use tools_core::tools::args_check::check;
        let schemas = bridge_schemas(1);
        let parameters = |i: usize| &schemas[i]["function"]["parameters"];
        check::<SearchArgs>(parameters(0), &[]).unwrap();
        check::<DescribeArgs>(parameters(1), &[]).unwrap();
        check::<CallArgs>(parameters(2), &[]).unwrap();
    }

    fn def(name: &str, description: &str) -> Value {
        json!({"type": "function", "function": {"name": name, "description": description,
            "parameters": {"type": "object", "properties": {"repo": {"type": "string"}}}}})
    }

    fn offer() -> ToolOffer {
        let definitions = vec![
            def("read_file", "Read a file"),
            def(
                "mcp__github__create_issue",
                "Create a GitHub issue in a repository",
            ),
            def(
                "mcp__github__list_pulls",
                "List pull requests of a repository",
            ),
            def("mcp__weather__forecast", "Weather forecast for a city"),
        ];
        ToolOffer {
            names: definitions.iter().map(|d| name_of(d).to_string()).collect(),
            definitions,
            from_mcp: Default::default(),
        }
    }

    #[test]
    fn activation_follows_mode_and_threshold() {
        assert!(assemble(offer(), 1_000_000, "auto", 10.0).1.is_none());
        assert!(assemble(offer(), 100, "auto", 10.0).1.is_some());
        assert!(assemble(offer(), 100, "off", 10.0).1.is_none());
        let (shown, search) = assemble(offer(), 1_000_000, "on", 10.0);
        let names: Vec<&str> = shown.definitions.iter().map(name_of).collect();
        assert_eq!(
            names,
            ["read_file", "tool_search", "tool_describe", "tool_call"]
        );
        assert!(search.unwrap().contains("mcp__weather__forecast"));
        assert!(shown.names.contains("tool_call"));
    }

    #[test]
    fn a_catalogue_too_large_for_a_small_window_defers_core_tools_too() {
        let big = |name: &str| {
            json!({"type": "function", "function": {"name": name,
                "description": "d".repeat(2_000), "parameters": {"type": "object"}}})
        };
        let definitions = vec![big("read_file"), big("write_file"), def("todo", "Plan")];
        let offer = ToolOffer {
            names: definitions.iter().map(|d| name_of(d).to_string()).collect(),
            definitions,
            from_mcp: Default::default(),
        };
        // 2,048 tokens: 819 for tools; each large schema is ~500.
        let (shown, search) = assemble(offer.clone(), 2_048, "auto", 10.0);
        let search = search.expect("active");
        assert!(search.contains("read_file") && search.contains("write_file"));
        let names: Vec<&str> = shown.definitions.iter().map(name_of).collect();
        assert_eq!(names, ["todo", "tool_search", "tool_describe", "tool_call"]);
        // A large window keeps them all, and "off" never defers.
        assert!(assemble(offer.clone(), 1_000_000, "auto", 10.0).1.is_none());
        assert!(assemble(offer, 2_048, "off", 10.0).1.is_none());
    }

    #[test]
    fn search_ranks_by_relevance_and_falls_back_to_names() {
        let (_, search) = assemble(offer(), 1, "on", 10.0);
        let search = search.unwrap();
        let r = search.search(&json!({"query": "create issue"}));
        assert_eq!(r["matches"][0]["name"], "mcp__github__create_issue", "{r}");
        assert_eq!(r["total_available"], 3);
        let r = search.search(&json!({"query": "weath"}));
        assert_eq!(r["matches"][0]["name"], "mcp__weather__forecast", "{r}");
        assert_eq!(search.search(&json!({}))["error"], "query is required");
    }

    #[test]
    fn describe_and_unwrap() {
        let (_, search) = assemble(offer(), 1, "on", 10.0);
        let search = search.unwrap();
        let d = search.describe(&json!({"name": "mcp__github__list_pulls"}));
        assert_eq!(d["parameters"]["properties"]["repo"]["type"], "string");
        assert!(search.describe(&json!({"name": "read_file"}))["error"].is_string());
        assert_eq!(
            search
                .unwrap_call(r#"{"name":"mcp__github__list_pulls","arguments":{"repo":"a/b"}}"#)
                .unwrap(),
            (
                "mcp__github__list_pulls".to_string(),
                r#"{"repo":"a/b"}"#.to_string()
            )
        );
        assert_eq!(
            search
                .unwrap_call(r#"{"name":"mcp__weather__forecast","arguments":"{\"repo\":1}"}"#)
                .unwrap()
                .1,
            r#"{"repo":1}"#
        );
        for bad in [
            r#"{"name":"tool_search"}"#,
            r#"{"name":"read_file"}"#,
            r#"{}"#,
            r#"{"name":"mcp__weather__forecast","arguments":[1]}"#,
        ] {
            assert!(search.unwrap_call(bad).is_err(), "{bad}");
        }
    }
}
