//! Putting one server's tools into the [`Registry`].
//!
//! Each tool passing the server's include/exclude filter becomes `mcp__<server>__<tool>`
//! in toolset `mcp-<server>` (with the alias `<server>`), source `mcp <server>`, with an
//! async handler that forwards the call. Built-in and plugin tools win: an MCP tool whose
//! name is taken by a non-MCP tool is skipped with a warning. A tool that can only be
//! called as an MCP task is skipped too (`task_support.rs`). Re-registering (reconnect,
//! `tools/list_changed`) replaces the server's tools and removes the ones it no longer
//! offers.

use std::collections::BTreeSet;
use std::sync::{Arc, Weak};

use rmcp::model::Tool;
use serde_json::{Map, Value, json};
use tools_core::{Parallelism, Registry, ToolEntry, ToolHandler, ToolSource};

use super::client::ServerClient;
use super::naming::NameAllocator;
use super::resources::Utility;
use super::results::error_value;
use super::session::ToolListing;
use super::task_support;

/// The toolset of a server's tools.
pub fn toolset_name(server: &str) -> String {
    format!("mcp-{server}")
}

/// Why a tool the user's include/exclude filter left out was skipped.
pub const FILTERED: &str = "excluded by tools.include/tools.exclude";

/// A tool that was not registered, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedTool {
    /// The server's name for it.
    pub raw_name: String,
    /// Why.
    pub reason: String,
}

/// What one registration pass did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Registration {
    /// Wire names now registered for the server, sorted.
    pub registered: Vec<String>,
    /// Tools left out by the filter or a collision.
    pub skipped: Vec<SkippedTool>,
}

/// Wire names for the raw names of one server, independent of the order the server
/// lists them in: when two raw names sanitize to the same wire name, the one that is
/// already clean (`get_sum` over `get.sum`) keeps it, else the smaller raw name (byte
/// order); the other gets the hash suffix.
pub fn allocate_names(
    server: &str,
    raw_names: impl Iterator<Item = String>,
) -> std::collections::HashMap<String, String> {
    let mut raw: Vec<String> = raw_names.collect();
    raw.sort_by(|a, b| {
        let dirty = |n: &str| super::naming::sanitize(n) != n;
        dirty(a).cmp(&dirty(b)).then_with(|| a.cmp(b))
    });
    raw.dedup();
    let mut allocator = NameAllocator::new();
    raw.into_iter()
        .map(|r| {
            let name = allocator.allocate(server, &r);
            (r, name)
        })
        .collect()
}

/// Register the tools of `listing` of `client`'s server, replacing what it registered
/// before (`previous`).
pub fn register_tools(
    registry: &Registry,
    client: &Arc<ServerClient>,
    listing: &ToolListing,
    previous: &[String],
) -> Registration {
    let tools = &listing.tools;
    let server = client.name();
    let toolset = toolset_name(server);
    let names = allocate_names(
        server,
        tools
            .iter()
            .map(|t| t.name.to_string())
            .filter(|raw| client.filter().allows(raw) && !listing.task_required.contains(raw)),
    );
    let mut report = Registration::default();
    for tool in tools {
        let raw = tool.name.to_string();
        if !client.filter().allows(&raw) {
            report.skipped.push(SkippedTool {
                raw_name: raw,
                reason: FILTERED.into(),
            });
            continue;
        }
        if listing.task_required.contains(&raw) {
            task_support::warn_once(server, &raw);
            report.skipped.push(SkippedTool {
                raw_name: raw,
                reason: task_support::REASON.into(),
            });
            continue;
        }
        let Some(name) = names.get(&raw).cloned() else {
            continue;
        };
        if let Some(existing) = registry.get(&name)
            && !matches!(existing.source, ToolSource::Mcp(_))
        {
            tracing::warn!(
                server,
                tool = %raw,
                name = %name,
                owner = %existing.source,
                "MCP tool skipped: the name belongs to a built-in or plugin tool"
            );
            report.skipped.push(SkippedTool {
                raw_name: raw,
                reason: format!("name {name} is taken by {} tool", existing.source),
            });
            continue;
        }
        let entry = ToolEntry::builder(name.clone(), toolset.clone())
            .description(description(server, tool))
            .parameters(input_schema(tool))
            .handler(handler(Arc::downgrade(client), raw.clone(), name.clone()))
            .parallelism(if client.parallel() {
                Parallelism::Safe
            } else {
                Parallelism::Exclusive
            })
            .emoji("🔌")
            .source(ToolSource::Mcp(server.to_string()))
            .build();
        match entry {
            Ok(entry) => {
                registry.register(entry);
                super::upstream::remember(&name, tool);
                report.registered.push(name);
            }
            Err(err) => {
                tracing::warn!(server, tool = %raw, %err, "MCP tool skipped");
                report.skipped.push(SkippedTool {
                    raw_name: raw,
                    reason: err.to_string(),
                });
            }
        }
    }
    register_utilities(registry, client, listing, &mut report);
    let current: BTreeSet<&String> = report.registered.iter().collect();
    for old in previous {
        if !current.contains(old)
            && registry
                .get(old)
                .is_some_and(|e| e.source == ToolSource::Mcp(server.to_string()))
        {
            registry.deregister(old);
            super::upstream::forget(old);
        }
    }
    if !report.registered.is_empty() {
        register_alias(registry, server, &toolset);
    }
    report.registered.sort();
    report
}

/// The resource and prompt tools the server offers (`resources.rs`); a server tool
/// with the same raw name keeps the name.
fn register_utilities(
    registry: &Registry,
    client: &Arc<ServerClient>,
    listing: &ToolListing,
    report: &mut Registration,
) {
    let server = client.name();
    for utility in Utility::ALL {
        let raw = utility.raw_name();
        if !utility.wanted(listing.offers, client.filter())
            || listing.tools.iter().any(|t| t.name == raw)
        {
            continue;
        }
        let name = format!(
            "{}{}__{raw}",
            super::naming::PREFIX,
            super::naming::sanitize(server)
        );
        if registry
            .get(&name)
            .is_some_and(|e| !matches!(e.source, ToolSource::Mcp(_)))
        {
            continue;
        }
        let entry = ToolEntry::builder(name.clone(), toolset_name(server))
            .description(utility.description(server))
            .parameters(utility.parameters())
            .handler(utility_handler(
                Arc::downgrade(client),
                utility,
                name.clone(),
            ))
            .parallelism(Parallelism::Safe)
            .emoji("🔌")
            .source(ToolSource::Mcp(server.to_string()))
            .build();
        match entry {
            Ok(entry) => {
                registry.register(entry);
                report.registered.push(name);
            }
            Err(err) => tracing::warn!(server, tool = raw, %err, "MCP utility tool skipped"),
        }
    }
}

fn utility_handler(client: Weak<ServerClient>, utility: Utility, wire: String) -> ToolHandler {
    ToolHandler::from_async(move |args, ctx| {
        let client = client.upgrade();
        let wire = wire.clone();
        async move {
            Ok(match client {
                Some(client) => client.utility(utility, &wire, args, &ctx).await,
                None => error_value(&format!(
                    "MCP tool {wire} is no longer available: its server was shut down"
                )),
            })
        }
    })
}

/// Remove every tool `names` of `server` (shutdown of a misbehaving server is not a
/// reason to do this; a disabled server is).
pub fn deregister_tools(registry: &Registry, server: &str, names: &[String]) {
    for name in names {
        if registry
            .get(name)
            .is_some_and(|e| e.source == ToolSource::Mcp(server.to_string()))
        {
            registry.deregister(name);
        }
    }
}

fn register_alias(registry: &Registry, server: &str, toolset: &str) {
    let clashes = registry.toolset_names().iter().any(|t| t == server)
        || registry
            .resolve_alias(server)
            .is_some_and(|target| target != toolset);
    if clashes {
        tracing::warn!(
            server,
            toolset,
            "MCP server name is already a toolset name; its tools are reachable only as toolset {toolset}"
        );
        return;
    }
    registry.register_toolset_alias(server, toolset);
}

fn description(server: &str, tool: &Tool) -> String {
    match tool.description.as_deref().map(str::trim) {
        Some(text) if !text.is_empty() => text.to_string(),
        _ => format!("MCP tool {} from {server}", tool.name),
    }
}

/// The server's input schema as an object schema providers accept.
fn input_schema(tool: &Tool) -> Value {
    let mut schema: Map<String, Value> = (*tool.input_schema).clone();
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        schema.insert("type".into(), json!("object"));
    }
    if !schema.get("properties").is_some_and(Value::is_object) {
        schema.insert("properties".into(), json!({}));
    }
    Value::Object(schema)
}

fn handler(client: Weak<ServerClient>, raw: String, wire: String) -> ToolHandler {
    ToolHandler::from_async(move |args, ctx| {
        let client = client.upgrade();
        let raw = raw.clone();
        let wire = wire.clone();
        async move {
            Ok(match client {
                Some(client) => client.call(&raw, &wire, args, &ctx).await,
                None => error_value(&format!(
                    "MCP tool {wire} is no longer available: its server was shut down"
                )),
            })
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clean_name_keeps_the_plain_wire_name_whatever_the_listing_order() {
        for order in [["get.sum", "get_sum"], ["get_sum", "get.sum"]] {
            let names = allocate_names("s", order.iter().map(|n| n.to_string()));
            assert_eq!(names["get_sum"], "mcp__s__get_sum", "{order:?}");
            assert!(
                names["get.sum"].starts_with("mcp__s__get_sum_"),
                "{order:?}"
            );
        }
        for order in [["a b", "a/b"], ["a/b", "a b"]] {
            let names = allocate_names("s", order.iter().map(|n| n.to_string()));
            assert_eq!(names["a b"], "mcp__s__a_b", "{order:?}");
        }
    }

    fn tool(name: &str, schema: Value) -> Tool {
        let mut t = Tool::default();
        t.name = name.to_string().into();
        t.input_schema = Arc::new(schema.as_object().cloned().unwrap_or_default());
        t
    }

    #[test]
    fn schemas_become_object_schemas() {
        assert_eq!(
            input_schema(&tool("a", json!({}))),
            json!({"type": "object", "properties": {}})
        );
        let s =
            json!({"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]});
        assert_eq!(input_schema(&tool("a", s.clone())), s);
    }

    #[test]
    fn description_falls_back() {
        let mut t = tool("get_time", json!({}));
        assert_eq!(description("time", &t), "MCP tool get_time from time");
        t.description = Some("Gets the time".into());
        assert_eq!(description("time", &t), "Gets the time");
    }
}
