//! Cached tool listings, so commands that only need to know a server's tools (`tools`,
//! `schema`, `toolsets`, `dispatch` before its first MCP call) do not start the server.
//!
//! Every successful `tools/list` of a server is saved as
//! `<home>/state/mcp-tools/<server>.json`: `{"key", "written", "tools",
//! "task_required"}` (the task-only tools, which are left out). A listing is
//! used only while it is fresh ([`MAX_AGE`]) and its `key` matches the server's section
//! as resolved now (transport, command, arguments, environment, URL, headers, filter,
//! toolhost's version), so editing the section or upgrading toolhost invalidates it; the
//! key is a hash, the file holds no setting. A server registered from the cache is
//! connected by its first call, which lists its tools again and refreshes the file.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use tools_core::stable_hash::fnv1a;

use super::config::ResolvedServer;
use super::naming::sanitize;
use super::session::ToolListing;

/// How long a listing is trusted.
pub const MAX_AGE: Duration = Duration::from_secs(24 * 60 * 60);

/// The listing files of one toolhost home.
#[derive(Clone, Debug)]
pub struct ListingCache {
    dir: PathBuf,
}

impl ListingCache {
    /// Listings under `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        ListingCache { dir: dir.into() }
    }

    fn file(&self, server: &str) -> PathBuf {
        self.dir.join(format!("{}.json", sanitize(server)))
    }

    /// The cached tools of `server`, when the listing is fresh and was made for the
    /// section as it is now.
    pub fn load(&self, server: &ResolvedServer) -> Option<ToolListing> {
        let value = load_state(&self.file(&server.name), server)?;
        let written = value.get("written").and_then(Value::as_u64)?;
        let age = now_secs().saturating_sub(written);
        if Duration::from_secs(age) > MAX_AGE {
            return None;
        }
        Some(ToolListing {
            tools: serde_json::from_value(value.get("tools")?.clone()).ok()?,
            // A listing without the field predates it: not trusted to be complete.
            task_required: serde_json::from_value(value.get("task_required")?.clone()).ok()?,
            offers: value
                .get("offers")
                .and_then(|o| serde_json::from_value(o.clone()).ok())
                .unwrap_or_default(),
        })
    }

    /// Save `tools` as the listing of `server` (failures are logged, never fatal).
    pub fn store(&self, server: &ResolvedServer, listing: &ToolListing) {
        let value = json!({
            "key": listing_key(server),
            "written": now_secs(),
            "tools": listing.tools,
            "task_required": listing.task_required,
            "offers": listing.offers,
        });
        save_state(
            &self.dir,
            &self.file(&server.name),
            &value,
            "the MCP tool listing",
        );
    }

    /// Forget the listing of `server`.
    pub fn forget(&self, server: &str) {
        let _ = std::fs::remove_file(self.file(server));
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// What a listing depends on, hashed.
pub(super) fn listing_key(server: &ResolvedServer) -> String {
    let basis = format!(
        "{}\0{:?}\0{:?}",
        env!("CARGO_PKG_VERSION"),
        server.transport,
        server.tools
    );
    format!("{:016x}", fnv1a(basis.bytes()))
}

/// The state file at `path` (a listing or a failure record), when it was written for
/// `server`'s section as it is now ([`listing_key`]).
pub(super) fn load_state(path: &Path, server: &ResolvedServer) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    let value: Value = serde_json::from_str(&text).ok()?;
    let key = value.get("key").and_then(Value::as_str)?;
    (key == listing_key(server)).then_some(value)
}

/// Write `value` to `path` under `dir` (created), atomically; a failure is logged at
/// debug level, never fatal: these files only save work.
pub(super) fn save_state(dir: &Path, path: &Path, value: &Value, what: &str) {
    let saved = std::fs::create_dir_all(dir)
        .and_then(|()| tools_core::atomic_file::write_atomic(path, value.to_string().as_bytes()));
    if let Err(err) = saved {
        tracing::debug!(path = %path.display(), %err, "could not save {what}");
    }
}

pub(super) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::McpServerSettings;
    use rmcp::model::Tool;

    fn server(command: &str) -> ResolvedServer {
        let settings: McpServerSettings =
            toml::from_str(&format!("command = {command:?}")).unwrap();
        settings.resolve("s", &|_| None).unwrap()
    }

    fn tool(name: &str) -> Tool {
        serde_json::from_value(json!({"name": name, "inputSchema": {"type": "object"}})).unwrap()
    }

    fn listing(names: &[&str], task_required: &[&str]) -> ToolListing {
        ToolListing {
            tools: names.iter().map(|n| tool(n)).collect(),
            task_required: task_required.iter().map(|n| n.to_string()).collect(),
            offers: crate::mcp::resources::Offers {
                resources: true,
                prompts: false,
            },
        }
    }

    #[test]
    fn a_listing_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ListingCache::new(dir.path());
        let s = server("a");
        assert!(cache.load(&s).is_none());
        let stored = listing(&["x", "y", "r"], &["r"]);
        cache.store(&s, &stored);
        assert_eq!(cache.load(&s), Some(stored));
    }

    #[test]
    fn a_listing_without_the_task_only_tools_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ListingCache::new(dir.path());
        let s = server("a");
        let value = json!({"key": listing_key(&s), "written": now_secs(), "tools": [tool("x")]});
        std::fs::write(dir.path().join("s.json"), value.to_string()).unwrap();
        assert!(cache.load(&s).is_none());
    }

    #[test]
    fn a_changed_section_invalidates_the_listing() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ListingCache::new(dir.path());
        cache.store(&server("a"), &listing(&["x"], &[]));
        assert!(cache.load(&server("b")).is_none());
    }

    #[test]
    fn a_stale_listing_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ListingCache::new(dir.path());
        let s = server("a");
        let old = now_secs() - MAX_AGE.as_secs() - 10;
        let value = json!({"key": listing_key(&s), "written": old, "tools": [tool("x")], "task_required": []});
        std::fs::write(dir.path().join("s.json"), value.to_string()).unwrap();
        assert!(cache.load(&s).is_none());
    }
}
