//! Wire names of MCP tools: `mcp__<server>__<tool>`.
//!
//! Each component is sanitized to `[A-Za-z0-9_-]` (every other character becomes `_`),
//! so the name satisfies the OpenAI tool-name rule. A name longer than 64 characters is
//! cut and given a stable 8-hex-digit hash suffix of the raw server and tool names; two
//! raw names that sanitize to the same wire name are told apart the same way. Names are
//! stable across runs and releases (the hash is [`fnv1a`], not a randomized hasher).

use std::collections::HashSet;

use tools_core::stable_hash::fnv1a;

/// Longest name providers accept.
pub const MAX_TOOL_NAME_LEN: usize = 64;
/// Every MCP tool name starts with this.
pub const PREFIX: &str = "mcp__";
const HASH_LEN: usize = 8;

/// Replace every character outside `[A-Za-z0-9_-]` with `_`.
pub fn sanitize(component: &str) -> String {
    let out: String = component
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() { "_".to_string() } else { out }
}

/// `mcp__<server>__<tool>`, sanitized and at most 64 characters.
pub fn tool_name(server: &str, tool: &str) -> String {
    let name = format!("{PREFIX}{}__{}", sanitize(server), sanitize(tool));
    if name.len() <= MAX_TOOL_NAME_LEN {
        name
    } else {
        hashed(&name, server, tool)
    }
}

/// `name` cut to fit, plus `_` and a hash of the raw names.
fn hashed(name: &str, server: &str, tool: &str) -> String {
    let keep = MAX_TOOL_NAME_LEN - HASH_LEN - 1;
    // All characters are ASCII after sanitizing: byte slicing is safe.
    let head = &name[..name.len().min(keep)];
    format!(
        "{head}_{:0width$x}",
        fnv1a(server.bytes().chain([0]).chain(tool.bytes())) as u32,
        width = HASH_LEN
    )
}

/// Hands out unique wire names for the tools of one server.
#[derive(Debug, Default)]
pub struct NameAllocator {
    taken: HashSet<String>,
}

impl NameAllocator {
    /// An allocator with nothing taken.
    pub fn new() -> Self {
        Self::default()
    }

    /// The wire name for raw `tool` of `server`, different from every name handed out
    /// before (a clash gets the hashed form, then a counter).
    pub fn allocate(&mut self, server: &str, tool: &str) -> String {
        let plain = tool_name(server, tool);
        let name = if !self.taken.contains(&plain) {
            plain
        } else {
            let full = format!("{PREFIX}{}__{}", sanitize(server), sanitize(tool));
            let mut candidate = hashed(&full, server, tool);
            let mut counter = 2u32;
            while self.taken.contains(&candidate) {
                let suffix = format!("_{counter}");
                let base = hashed(&full, server, tool);
                let keep = base.len().min(MAX_TOOL_NAME_LEN - suffix.len());
                candidate = format!("{}{suffix}", &base[..keep]);
                counter += 1;
            }
            tracing::warn!(
                server,
                tool,
                name = %candidate,
                "MCP tool name clashes with another tool of the same server after sanitizing; using a hashed name"
            );
            candidate
        };
        self.taken.insert(name.clone());
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        let cases = [
            ("time", "get_current_time", "mcp__time__get_current_time"),
            ("my-server", "echo", "mcp__my-server__echo"),
            ("my.server", "a/b c", "mcp__my_server__a_b_c"),
            ("ünï", "tool", "mcp___n___tool"),
            ("s", "", "mcp__s___"),
        ];
        for (server, tool, want) in cases {
            assert_eq!(tool_name(server, tool), want, "{server} {tool}");
        }
    }

    #[test]
    fn long_names_are_cut_with_a_stable_hash() {
        let tool = "a".repeat(100);
        let name = tool_name("server", &tool);
        assert_eq!(name.len(), MAX_TOOL_NAME_LEN);
        assert!(name.starts_with("mcp__server__aaaa"));
        assert_eq!(name, tool_name("server", &tool), "stable");
        let other = tool_name("server", &format!("{tool}b"));
        assert_ne!(name, other, "different raw names differ");
        tools_core::entry::validate_name(&name).unwrap();
    }

    #[test]
    fn clashing_names_are_made_unique() {
        let mut names = NameAllocator::new();
        let a = names.allocate("s", "a.b");
        let b = names.allocate("s", "a_b");
        let c = names.allocate("s", "a b");
        assert_eq!(a, "mcp__s__a_b");
        assert_ne!(a, b);
        assert_ne!(b, c);
        assert_ne!(a, c);
        for name in [&a, &b, &c] {
            tools_core::entry::validate_name(name).unwrap();
        }
    }

    #[test]
    fn repeated_identical_names_get_counters() {
        let mut names = NameAllocator::new();
        let all: HashSet<String> = (0..5).map(|_| names.allocate("s", "x")).collect();
        assert_eq!(all.len(), 5);
        for name in &all {
            assert!(name.len() <= MAX_TOOL_NAME_LEN, "{name}");
        }
    }
}
