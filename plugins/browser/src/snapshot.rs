//! The text snapshot of a page's accessibility tree, with element refs (`[ref=e1]`) that
//! the other tools accept as `@e1`.
//!
//! Full mode prints every named node (text included) as an indented outline; compact mode
//! keeps only the elements one can act on plus headings, which is what the model needs
//! to pick its next click.
//!
//! Two sources feed the same line format ([`Snapshot::line`]): the in-page walker of
//! `walker.rs` (fast, the default) and, where it declines, `Accessibility.getFullAXTree`
//! rendered by [`render`] here.

use std::collections::HashMap;

use serde_json::Value;

/// Roles that get a ref (can be clicked, typed into or are landmarks worth pointing at).
const INTERACTIVE: [&str; 18] = [
    "button",
    "link",
    "textbox",
    "searchbox",
    "checkbox",
    "radio",
    "combobox",
    "listbox",
    "option",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "tab",
    "slider",
    "spinbutton",
    "switch",
    "treeitem",
    "heading",
];

/// Roles that carry no information of their own.
const STRUCTURAL: [&str; 6] = [
    "none",
    "generic",
    "InlineTextBox",
    "LineBreak",
    "presentation",
    "RootWebArea",
];

/// The element an `@eN` ref stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefTarget {
    /// A backend DOM node id (from the accessibility tree).
    Backend(i64),
    /// Entry `index` of the element list the walker kept in the isolated world
    /// `context` (resolved to a backend node when used; see `walker.rs`).
    Walked { context: i64, index: u64 },
}

/// A rendered snapshot.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// The outline.
    pub text: String,
    /// `e1` → the element.
    pub refs: HashMap<String, RefTarget>,
}

/// One outline line, before formatting.
#[derive(Debug)]
pub struct Line<'a> {
    /// Indentation level.
    pub depth: usize,
    /// Chromium's role name (`StaticText` prints as `text:`).
    pub role: &'a str,
    /// Accessible name, untrimmed.
    pub name: &'a str,
    /// Current value (text fields, selects), or empty.
    pub value: &'a str,
    /// `checked`, `level=2`, … in accessibility-tree property order.
    pub flags: Vec<String>,
    /// The element a ref should point at (interactive lines only).
    pub target: Option<RefTarget>,
}

impl Snapshot {
    /// Append `line`, giving it the next ref when it has a target.
    pub fn line(&mut self, line: Line<'_>) {
        let name = line.name.trim();
        let indent = "  ".repeat(line.depth);
        let mut text = if line.role == "StaticText" {
            format!("{indent}- text: {}", quote(name))
        } else {
            format!("{indent}- {}", line.role)
        };
        if line.role != "StaticText" && !name.is_empty() {
            text.push(' ');
            text.push_str(&quote(name));
        }
        if !line.value.is_empty() {
            text.push_str(&format!(" value={}", quote(line.value)));
        }
        for flag in &line.flags {
            text.push_str(&format!(" [{flag}]"));
        }
        if let Some(target) = line.target {
            let reference = format!("e{}", self.refs.len() + 1);
            text.push_str(&format!(" [ref={reference}]"));
            self.refs.insert(reference, target);
        }
        self.text.push_str(&text);
        self.text.push('\n');
    }
}

struct Tree<'a> {
    nodes: HashMap<&'a str, &'a Value>,
    full: bool,
    out: Snapshot,
}

/// Render the nodes of `Accessibility.getFullAXTree`.
pub fn render(nodes: &[Value], full: bool) -> Snapshot {
    let mut tree = Tree {
        nodes: nodes
            .iter()
            .filter_map(|n| Some((n["nodeId"].as_str()?, n)))
            .collect(),
        full,
        out: Snapshot::default(),
    };
    if let Some(root) = nodes.first() {
        tree.visit(root, 0);
    }
    tree.out
}

fn str_of<'a>(node: &'a Value, field: &str) -> &'a str {
    node[field]["value"].as_str().unwrap_or("")
}

impl Tree<'_> {
    fn visit(&mut self, node: &Value, depth: usize) {
        let role = str_of(node, "role");
        let name = str_of(node, "name").trim();
        let ignored = node["ignored"].as_bool().unwrap_or(false);
        let interactive = INTERACTIVE.contains(&role);
        let shown = !ignored
            && if self.full {
                !STRUCTURAL.contains(&role) && (interactive || !name.is_empty())
            } else {
                interactive
            };
        let child_depth = if shown && self.full { depth + 1 } else { depth };
        if shown {
            self.line(node, role, name, interactive, depth);
        }
        // Static text repeats its parent's name in full mode; the parent line has it.
        if role == "StaticText" || (interactive && role != "listbox" && role != "combobox") {
            return;
        }
        if let Some(children) = node["childIds"].as_array() {
            for id in children.iter().filter_map(Value::as_str) {
                if let Some(child) = self.nodes.get(id).copied() {
                    self.visit(child, child_depth);
                }
            }
        }
    }

    fn line(&mut self, node: &Value, role: &str, name: &str, interactive: bool, depth: usize) {
        let mut flags = Vec::new();
        for property in node["properties"].as_array().into_iter().flatten() {
            let key = property["name"].as_str().unwrap_or("");
            let on = property["value"]["value"].as_bool() == Some(true)
                || property["value"]["value"].as_str() == Some("true");
            if on
                && matches!(
                    key,
                    "checked" | "disabled" | "required" | "expanded" | "selected"
                )
            {
                flags.push(key.to_string());
            }
            if key == "level" {
                flags.push(format!("level={}", property["value"]["value"]));
            }
        }
        let target = node["backendDOMNodeId"]
            .as_i64()
            .filter(|_| interactive)
            .map(RefTarget::Backend);
        self.out.line(Line {
            depth,
            role,
            name,
            value: str_of(node, "value"),
            flags,
            target,
        });
    }
}

fn quote(text: &str) -> String {
    let clipped: String = text.chars().take(200).collect();
    Value::String(clipped).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(id: &str, role: &str, name: &str, children: &[&str], backend: i64) -> Value {
        json!({
            "nodeId": id, "ignored": false,
            "role": { "value": role }, "name": { "value": name },
            "childIds": children, "backendDOMNodeId": backend,
        })
    }

    fn page() -> Vec<Value> {
        vec![
            node("1", "RootWebArea", "Page", &["2", "3", "5"], 1),
            node("2", "heading", "Title", &[], 2),
            node("3", "paragraph", "", &["4"], 3),
            node("4", "StaticText", "Hello", &[], 4),
            node("5", "button", "Go", &[], 5),
        ]
    }

    #[test]
    fn compact_lists_only_interactive_elements_with_refs() {
        let snap = render(&page(), false);
        assert_eq!(
            snap.text,
            "- heading \"Title\" [ref=e1]\n- button \"Go\" [ref=e2]\n"
        );
        assert_eq!(snap.refs["e2"], RefTarget::Backend(5));
    }

    #[test]
    fn full_includes_text() {
        let snap = render(&page(), true);
        assert!(snap.text.contains("- text: \"Hello\""), "{}", snap.text);
        assert!(snap.text.contains("- button \"Go\" [ref=e2]"));
    }
}
