//! What the benches (`benches/browser.rs`) drive: the tool handlers as the plugin runs
//! them, without the plugin ABI around them. Hidden from the docs;
//! not an API of the plugin (which is only ever loaded as a `cdylib`).

use serde_json::{Value, json};

pub use crate::registry::Registry;
pub use crate::settings::Settings;
use crate::tools::outcome;

/// `browser_navigate` to `url` for `task`: the tool's result.
pub fn navigate(registry: &Registry, url: &str, task: &str) -> Value {
    match serde_json::from_value(json!({ "url": url })) {
        Ok(args) => outcome(crate::navigation::navigate(registry, args, task)),
        Err(e) => json!({ "success": false, "error": e.to_string() }),
    }
}

/// `browser_snapshot` (`full` or compact) for `task`: the tool's result.
pub fn snapshot(registry: &Registry, full: bool, task: &str) -> Value {
    match serde_json::from_value(json!({ "full": full })) {
        Ok(args) => outcome(crate::navigation::snapshot(registry, args, task)),
        Err(e) => json!({ "success": false, "error": e.to_string() }),
    }
}

/// `browser_snapshot` rendered from `Accessibility.getFullAXTree` (the path the in-page
/// walker replaced, still its fallback), for comparison rows.
pub fn snapshot_from_tree(registry: &Registry, full: bool, task: &str) -> Value {
    outcome(registry.with(task, false, |session| {
        let snap = crate::navigation::tree_snapshot(session, full)?;
        Ok(json!({ "success": true, "snapshot": snap.text, "element_count": snap.refs.len() }))
    }))
}
