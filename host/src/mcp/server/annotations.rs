//! MCP tool annotations and titles for what `toolhost mcp serve` exposes.
//!
//! Clients use the hints to decide what to confirm with their user (Claude Desktop asks
//! before a tool that is not read-only, for example). Core tools get fixed hints here;
//! a tool re-served from one of toolhost's own MCP servers keeps the upstream server's
//! `title`, `annotations` and `outputSchema` ([`crate::mcp::upstream`]); plugin tools
//! get none (their authors know, toolhost does not).
//!
//! | tool | read-only | destructive | idempotent | open world |
//! |---|---|---|---|---|
//! | `read_file`, `search_files` | yes | no | yes | no |
//! | `write_file` | no | yes | yes | no |
//! | `patch` | no | yes | no | no |
//! | `terminal`, `process` | no | yes | no | yes |
//! | `todo`, `memory` | no | no | no | no |
//! | `clarify` | yes | no | no | no |

use rmcp::model::ToolAnnotations;
use serde_json::json;

/// `(title, read_only, destructive, idempotent, open_world)` of a core tool.
fn hints(name: &str) -> Option<(&'static str, bool, bool, bool, bool)> {
    Some(match name {
        "read_file" => ("Read file", true, false, true, false),
        "search_files" => ("Search files", true, false, true, false),
        "write_file" => ("Write file", false, true, true, false),
        "patch" => ("Patch file", false, true, false, false),
        "terminal" => ("Run shell command", false, true, false, true),
        "process" => ("Manage background processes", false, true, false, true),
        "todo" => ("Task list", false, false, false, false),
        "memory" => ("Persistent memory", false, false, false, false),
        "clarify" => ("Ask the user", true, false, false, false),
        _ => return None,
    })
}

/// The title and annotations of core tool `name`, if it is one.
pub fn core_annotations(name: &str) -> Option<(String, ToolAnnotations)> {
    let (title, read_only, destructive, idempotent, open_world) = hints(name)?;
    let value = json!({
        "title": title,
        "readOnlyHint": read_only,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": open_world,
    });
    let annotations = serde_json::from_value(value).ok()?;
    Some((title.to_string(), annotations))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_core_tool_has_a_title_and_all_four_hints() {
        for name in [
            "read_file",
            "search_files",
            "write_file",
            "patch",
            "terminal",
            "process",
            "todo",
            "memory",
            "clarify",
        ] {
            let (title, annotations) = core_annotations(name).unwrap();
            assert!(!title.is_empty());
            let value = serde_json::to_value(&annotations).unwrap();
            for hint in [
                "readOnlyHint",
                "destructiveHint",
                "idempotentHint",
                "openWorldHint",
            ] {
                assert!(value[hint].is_boolean(), "{name}: {hint} in {value}");
            }
        }
        assert!(core_annotations("base64").is_none());
    }

    #[test]
    fn readers_are_read_only_and_the_terminal_is_not() {
        let read = serde_json::to_value(core_annotations("read_file").unwrap().1).unwrap();
        assert_eq!(read["readOnlyHint"], true);
        let term = serde_json::to_value(core_annotations("terminal").unwrap().1).unwrap();
        assert_eq!(term["readOnlyHint"], false);
        assert_eq!(term["destructiveHint"], true);
        assert_eq!(term["openWorldHint"], true);
    }
}
