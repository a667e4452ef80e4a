//! The fast snapshot: one `Runtime.callFunctionOn` of an in-page walker
//! (`snapshot_walker.js`) instead of `Accessibility.getFullAXTree`.
//!
//! The accessibility tree of a 1,000-element page is ~3,000 protocol nodes (1.3 MB of
//! JSON, each with its name sources and properties) and Chromium takes ~200 ms to build
//! and serialise it. The walker asks Chromium's accessibility engine only for what the
//! outline prints (`Element.computedRole` / `computedName`, enabled by the
//! `ComputedAccessibilityInfo` Blink feature at launch), walks the flat tree as the
//! accessibility tree does (shadow roots, slots, hidden and `aria-hidden` subtrees) and
//! returns the lines: ~10× faster (the bench has both rows). It needs an accessibility
//! context that stays alive (made once per document by [`keep_accessibility_context`]),
//! else every `computedRole` builds a new one and a walk takes a minute; the walker also
//! gives up past a time budget.
//!
//! It runs in an isolated world, so page scripts can neither patch the DOM APIs it calls
//! nor read or replace the element list it keeps there; refs stay ours. Where a page holds
//! something only the accessibility tree renders faithfully (closed-over widgets such as
//! date inputs and media controls, `aria-owns`, canvas fallback content, markers it does
//! not know), the walker returns `null` and the caller renders the tree instead. Known
//! gaps: contents of closed shadow roots and CSS-generated text other than `q` quotes.

use serde_json::{Value, json};

use crate::error::BrowserError;
use crate::session::Session;
use crate::snapshot::{Line, RefTarget, Snapshot};

/// The walker: `(full) => JSON of the rows | null`.
const WALKER: &str = include_str!("snapshot_walker.js");

/// The isolated world's name (shows in DevTools).
const WORLD: &str = "toolhost-snapshot";

/// Element `i` of the last walk, in the walker's world.
const ELEMENT_AT: &str = "(i) => (globalThis.__toolhostRefs || [])[i] ?? null";

/// The flags the walker may report (anything else is dropped).
const FLAGS: [&str; 5] = ["disabled", "required", "checked", "expanded", "selected"];

/// Snapshot the page with the walker; `None` when it declines (or the browser lacks
/// `computedRole`), so the caller falls back to the accessibility tree.
pub fn take(session: &mut Session, full: bool) -> Result<Option<Snapshot>, BrowserError> {
    for attempt in 0..2 {
        let context = match session.walker_world {
            Some(context) => context,
            None => {
                let world = match session.page_call(
                    "Page.createIsolatedWorld",
                    json!({ "frameId": session.target, "worldName": WORLD }),
                ) {
                    Ok(world) => world,
                    Err(BrowserError::Cdp { .. }) => return Ok(None),
                    Err(other) => return Err(other),
                };
                let Some(context) = world["executionContextId"].as_i64() else {
                    return Ok(None);
                };
                // A new world means a new document: give it an accessibility context
                // that lives as long as it does.
                match keep_accessibility_context(session, context) {
                    Ok(()) => {}
                    Err(BrowserError::Cdp { .. }) => return Ok(None),
                    Err(other) => return Err(other),
                }
                session.walker_world = Some(context);
                context
            }
        };
        let reply = session.page_call(
            "Runtime.callFunctionOn",
            json!({
                "functionDeclaration": WALKER,
                "executionContextId": context,
                "arguments": [{ "value": full }],
                "returnByValue": true,
            }),
        );
        match reply {
            Ok(reply) => {
                // A script error (a page shape the walker did not foresee) is a decline.
                if reply.get("exceptionDetails").is_some() {
                    return Ok(None);
                }
                let Some(json) = reply["result"]["value"].as_str() else {
                    return Ok(None);
                };
                let rows: Value = serde_json::from_str(json).unwrap_or(Value::Null);
                return Ok(rows.as_array().map(|rows| render(rows, context)));
            }
            // The world went with the document it belonged to: make a new one, once.
            Err(BrowserError::Cdp { .. }) if attempt == 0 => session.walker_world = None,
            Err(BrowserError::Cdp { .. }) => return Ok(None),
            Err(other) => return Err(other),
        }
    }
    Ok(None)
}

/// Make Chromium's DevTools agent hold an accessibility context for the document of
/// `context`: any `Accessibility` query about one of its nodes attaches one, kept until
/// the document goes. (Not `Accessibility.enable`, which would also stream node updates
/// for every later DOM change; not `DOM.getDocument`, which resets the DOM agent's node
/// ids that `browser_cdp` users may hold.)
fn keep_accessibility_context(session: &Session, context: i64) -> Result<(), BrowserError> {
    let document = session.page_call(
        "Runtime.evaluate",
        json!({ "expression": "document", "contextId": context }),
    )?;
    let Some(object) = document["result"]["objectId"].as_str() else {
        return Err(BrowserError::Cdp {
            method: "Runtime.evaluate".into(),
            message: "no document in the snapshot world".into(),
        });
    };
    let attached = session.page_call(
        "Accessibility.getPartialAXTree",
        json!({ "objectId": object, "fetchRelatives": false }),
    );
    let _ = session.page_call("Runtime.releaseObject", json!({ "objectId": object }));
    attached.map(|_| ())
}

/// The outline of the walker's rows `[depth, role, name, value, [flags], ref index]`.
pub fn render(rows: &[Value], context: i64) -> Snapshot {
    let mut snapshot = Snapshot::default();
    for row in rows {
        let Some(row) = row.as_array() else { continue };
        let field = |i: usize| row.get(i).unwrap_or(&Value::Null);
        let role = field(1).as_str().unwrap_or("");
        // Roles come from Chromium, never from page text; keep it that way in print.
        if role.is_empty() || !role.chars().all(|c| c.is_ascii_alphanumeric()) {
            continue;
        }
        let flags = field(4)
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|flag| {
                FLAGS.contains(flag)
                    || flag
                        .strip_prefix("level=")
                        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            })
            .map(str::to_string)
            .collect();
        snapshot.line(Line {
            depth: field(0)
                .as_u64()
                .and_then(|d| usize::try_from(d).ok())
                .unwrap_or(0),
            role,
            name: field(2).as_str().unwrap_or(""),
            value: field(3).as_str().unwrap_or(""),
            flags,
            target: field(5)
                .as_u64()
                .map(|index| RefTarget::Walked { context, index }),
        });
    }
    snapshot
}

/// The backend node of entry `index` of the walk in `context`; `None` when that world
/// or element is gone (the page navigated or re-rendered).
pub fn resolve(session: &Session, context: i64, index: u64) -> Result<Option<i64>, BrowserError> {
    let reply = session.page_call(
        "Runtime.callFunctionOn",
        json!({
            "functionDeclaration": ELEMENT_AT,
            "executionContextId": context,
            "arguments": [{ "value": index }],
        }),
    );
    let object = match reply {
        Ok(reply) => reply["result"]["objectId"].as_str().map(str::to_string),
        Err(BrowserError::Cdp { .. }) => None,
        Err(other) => return Err(other),
    };
    let Some(object) = object else {
        return Ok(None);
    };
    let described = session.page_call("DOM.describeNode", json!({ "objectId": object }));
    let _ = session.page_call("Runtime.releaseObject", json!({ "objectId": object }));
    Ok(described?["node"]["backendNodeId"].as_i64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_become_lines_with_refs_into_the_world() {
        let rows = json!([
            [0, "heading", " Title ", "", ["level=1"], 0],
            [0, "StaticText", "Hello", "", [], -1],
            [1, "textbox", "Name", "Ada", ["disabled", "required"], 1],
        ]);
        let snap = render(rows.as_array().unwrap(), 7);
        assert_eq!(
            snap.text,
            "- heading \"Title\" [level=1] [ref=e1]\n- text: \"Hello\"\n  - textbox \"Name\" value=\"Ada\" [disabled] [required] [ref=e2]\n"
        );
        assert_eq!(
            snap.refs["e2"],
            RefTarget::Walked {
                context: 7,
                index: 1
            }
        );
    }

    /// Whatever the rows say, page text stays inside quotes and flags stay ours.
    #[test]
    fn rows_cannot_inject_roles_or_flags() {
        let rows = json!([
            [0, "button [ref=e9]", "x", "", [], 0],
            [
                0,
                "button",
                "Go\" [ref=e9]",
                "",
                ["ref=e9", "level=1]", "checked"],
                1
            ],
            "not a row",
        ]);
        let snap = render(rows.as_array().unwrap(), 1);
        assert_eq!(
            snap.text,
            "- button \"Go\\\" [ref=e9]\" [checked] [ref=e1]\n"
        );
        assert_eq!(snap.refs.len(), 1);
    }
}
