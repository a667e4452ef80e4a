//! The `todo` tool's state: one ordered task list per session (list order is
//! priority), persisted as `<state>/todos/<session>.json`.
//!
//! Hermes' semantics: no `todos` → read; `merge=false` (default) replaces the list;
//! `merge=true` updates items by id (only the fields given) and appends new ones;
//! duplicate ids in one call keep the last occurrence; invalid statuses become
//! `pending`, missing content `(no description)`; content over 4,000 characters is cut;
//! at most 256 items; every call returns the whole list and a summary. A `todos` value
//! sent as a JSON string is parsed.
//!
//! Writes re-read, merge and save under an advisory file lock (`<session>.json.lock`),
//! so parallel `toolhost call todo` processes never lose each other's items.

use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::{read_state, state_key};
use crate::atomic_file::write_atomic;
use crate::file_lock::FileLock;
use crate::result::tool_error;
use crate::tools::args::{self, Given, lenient};

/// Valid statuses.
const STATUSES: [&str; 4] = ["pending", "in_progress", "completed", "cancelled"];
/// Longest item content kept.
const MAX_CONTENT_CHARS: usize = 4_000;
/// Most items kept (the head of the list: order is priority).
const MAX_ITEMS: usize = 256;
/// Appended to cut content.
const CUT_MARKER: &str = "… [truncated]";

/// One task.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TodoItem {
    /// Agent-chosen identifier.
    pub id: String,
    /// Description.
    pub content: String,
    /// `pending`, `in_progress`, `completed` or `cancelled`.
    pub status: String,
}

#[derive(Serialize, Deserialize)]
struct TodoFile {
    session_id: String,
    todos: Vec<TodoItem>,
}

/// The `todo` tool's arguments (Hermes' names; the schema is in `tools/todo.rs`). Items
/// are read one by one, leniently, as Hermes' `_validate` reads them.
#[derive(Debug, Deserialize)]
pub struct TodoArgs {
    /// The items to write (absent or `null`: read the list). A JSON string holding a
    /// list is accepted too.
    #[serde(default)]
    todos: Option<Given<Vec<Value>>>,
    /// Update items by id instead of replacing the list.
    #[serde(default, deserialize_with = "lenient::boolean")]
    merge: Option<bool>,
}

/// Task lists, one per session, on disk.
#[derive(Debug)]
pub struct TodoStore {
    dir: PathBuf,
    lock: Mutex<()>,
}

fn cap_content(content: &str) -> String {
    if content.chars().count() <= MAX_CONTENT_CHARS {
        return content.to_string();
    }
    let keep = MAX_CONTENT_CHARS - CUT_MARKER.chars().count();
    let mut out: String = content.chars().take(keep).collect();
    out.push_str(CUT_MARKER);
    out
}

fn field(item: &Value, key: &str) -> String {
    match item.get(key) {
        Some(Value::String(s)) => s.trim().to_string(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

fn normalize_status(raw: &str) -> Option<String> {
    let status = raw.trim().to_lowercase();
    STATUSES.contains(&status.as_str()).then_some(status)
}

/// A full item from a model-supplied value (Hermes' `_validate`).
fn validate(item: &Value) -> TodoItem {
    if !item.is_object() {
        return TodoItem {
            id: "?".into(),
            content: "(invalid item)".into(),
            status: "pending".into(),
        };
    }
    let id = Some(field(item, "id"))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "?".into());
    let content = Some(field(item, "content"))
        .filter(|s| !s.is_empty())
        .map_or_else(|| "(no description)".into(), |c| cap_content(&c));
    let status = normalize_status(&field(item, "status")).unwrap_or_else(|| "pending".into());
    TodoItem {
        id,
        content,
        status,
    }
}

/// Keep the last occurrence of each id, at that occurrence's position.
fn dedupe_by_id(todos: &[Value]) -> Vec<&Value> {
    let key = |i: usize, item: &Value| {
        if item.is_object() {
            Some(field(item, "id"))
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "?".into())
        } else {
            format!("\0invalid{i}")
        }
    };
    let keys: Vec<String> = todos.iter().enumerate().map(|(i, t)| key(i, t)).collect();
    todos
        .iter()
        .enumerate()
        .filter(|(i, _)| !keys[i + 1..].contains(&keys[*i]))
        .map(|(_, t)| t)
        .collect()
}

impl TodoStore {
    /// Lists stored under `dir`.
    pub fn new(dir: PathBuf) -> Self {
        TodoStore {
            dir,
            lock: Mutex::new(()),
        }
    }

    fn file(&self, session: &str) -> PathBuf {
        self.dir.join(format!("{}.json", state_key(session)))
    }

    fn lock_file(&self, session: &str) -> PathBuf {
        self.dir.join(format!("{}.json.lock", state_key(session)))
    }

    /// The session's list.
    pub fn read(&self, session: &str) -> Result<Vec<TodoItem>, String> {
        let path = self.file(session);
        match read_state(&path) {
            Ok(None) => Ok(Vec::new()),
            Ok(Some(text)) => serde_json::from_str::<TodoFile>(&text)
                .map(|f| f.todos)
                .map_err(|e| {
                    format!(
                        "the todo list file {} is corrupt ({e}); it was left untouched",
                        path.display()
                    )
                }),
            Err(err) => Err(format!("cannot read {}: {err}", path.display())),
        }
    }

    fn save(&self, session: &str, todos: &[TodoItem]) -> Result<(), String> {
        let path = self.file(session);
        let file = TodoFile {
            session_id: session.to_string(),
            todos: todos.to_vec(),
        };
        let text = serde_json::to_string_pretty(&file).map_err(|e| e.to_string())?;
        write_atomic(&path, text.as_bytes())
            .map_err(|e| format!("cannot save the todo list to {}: {e}", path.display()))
    }

    /// Replace (`merge = false`) or merge `todos` into the session's list; returns the
    /// new list.
    pub fn write(
        &self,
        session: &str,
        todos: &[Value],
        merge: bool,
    ) -> Result<Vec<TodoItem>, String> {
        let _guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        // Other processes share the file: read, merge and save under their lock too.
        let _file_lock = FileLock::acquire(&self.lock_file(session))
            .map_err(|e| format!("cannot lock the todo list: {e}"))?;
        let incoming = dedupe_by_id(todos);
        let mut items = if merge {
            self.read(session)?
        } else {
            Vec::new()
        };
        if merge {
            for item in incoming {
                let id = field(item, "id");
                if id.is_empty() {
                    continue;
                }
                match items.iter_mut().find(|existing| existing.id == id) {
                    Some(existing) => {
                        let content = field(item, "content");
                        if !content.is_empty() {
                            existing.content = cap_content(&content);
                        }
                        if let Some(status) = normalize_status(&field(item, "status")) {
                            existing.status = status;
                        }
                    }
                    None => items.push(validate(item)),
                }
            }
        } else {
            items = incoming.into_iter().map(validate).collect();
        }
        items.truncate(MAX_ITEMS);
        self.save(session, &items)?;
        Ok(items)
    }

    /// The `todo` tool: read or write, then the whole list with a summary.
    pub fn handle(&self, args: &Value, session: &str) -> Value {
        let args: TodoArgs = match args::parse(args.clone()) {
            Ok(args) => args,
            Err(err) => return err.to_result(),
        };
        let merge = args.merge.unwrap_or(false);
        let outcome = match &args.todos {
            None => self.read(session),
            Some(Given::Ok(todos)) => self.write(session, todos, merge),
            Some(Given::Other(Value::String(text))) => match serde_json::from_str::<Value>(text) {
                Ok(Value::Array(todos)) => self.write(session, &todos, merge),
                _ => {
                    return tool_error("todos must be a list of objects, got unparseable string");
                }
            },
            Some(Given::Other(other)) => {
                let kind = match other {
                    Value::Object(_) => "object",
                    Value::Bool(_) => "boolean",
                    _ => "number",
                };
                return tool_error(format!("todos must be a list, got {kind}"));
            }
        };
        match outcome {
            Ok(items) => render(&items),
            Err(message) => tool_error(message),
        }
    }

    /// Active items rendered for re-injection after compression (Hermes' format).
    pub fn format_for_injection(&self, session: &str) -> Option<String> {
        let items = self.read(session).ok()?;
        let active: Vec<&TodoItem> = items
            .iter()
            .filter(|i| i.status == "pending" || i.status == "in_progress")
            .collect();
        if active.is_empty() {
            return None;
        }
        let mut lines =
            vec!["[Your active task list was preserved across context compression]".to_string()];
        for item in active {
            let marker = if item.status == "in_progress" {
                "[>]"
            } else {
                "[ ]"
            };
            lines.push(format!(
                "- {marker} {}. {} ({})",
                item.id, item.content, item.status
            ));
        }
        Some(lines.join("\n"))
    }
}

fn render(items: &[TodoItem]) -> Value {
    let count = |status: &str| items.iter().filter(|i| i.status == status).count();
    let mut summary = Map::new();
    summary.insert("total".into(), json!(items.len()));
    for status in STATUSES {
        summary.insert(status.into(), json!(count(status)));
    }
    json!({ "todos": items, "summary": summary })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, TodoStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = TodoStore::new(dir.path().join("todos"));
        (dir, store)
    }

    fn ids(value: &Value) -> Vec<String> {
        value["todos"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn read_of_empty_session() {
        let (_d, s) = store();
        assert_eq!(
            s.handle(&json!({}), "s1"),
            json!({"todos": [], "summary": {"total": 0, "pending": 0, "in_progress": 0, "completed": 0, "cancelled": 0}})
        );
    }

    #[test]
    fn replace_mode_replaces_the_whole_list() {
        let (_d, s) = store();
        s.handle(&json!({"todos": [{"id": "1", "content": "a", "status": "pending"}, {"id": "2", "content": "b", "status": "pending"}]}), "s");
        let r = s.handle(
            &json!({"todos": [{"id": "3", "content": "c", "status": "in_progress"}]}),
            "s",
        );
        assert_eq!(ids(&r), vec!["3"]);
        assert_eq!(r["summary"]["in_progress"], 1);
    }

    #[test]
    fn merge_updates_given_fields_and_appends_new_items() {
        let (_d, s) = store();
        s.handle(&json!({"todos": [{"id": "1", "content": "write code", "status": "in_progress"}, {"id": "2", "content": "test", "status": "pending"}]}), "s");
        let r = s.handle(
            &json!({"merge": true, "todos": [{"id": "1", "status": "completed"}, {"id": "3", "content": "ship"}]}),
            "s",
        );
        assert_eq!(ids(&r), vec!["1", "2", "3"]);
        assert_eq!(
            r["todos"][0],
            json!({"id": "1", "content": "write code", "status": "completed"})
        );
        assert_eq!(r["todos"][2]["status"], "pending");
        assert_eq!(r["summary"]["completed"], 1);
    }

    #[test]
    fn duplicate_ids_keep_the_last_and_bad_values_are_normalized() {
        let (_d, s) = store();
        let r = s.handle(
            &json!({"todos": [{"id": "a", "content": "first", "status": "pending"}, {"id": "b", "content": "", "status": "bogus"}, {"id": "a", "content": "second", "status": "DONE"}, 7]}),
            "s",
        );
        assert_eq!(
            r["todos"],
            json!([
                {"id": "b", "content": "(no description)", "status": "pending"},
                {"id": "a", "content": "second", "status": "pending"},
                {"id": "?", "content": "(invalid item)", "status": "pending"}
            ])
        );
    }

    #[test]
    fn lists_are_per_session_and_persist_across_stores() {
        let (dir, s) = store();
        s.handle(
            &json!({"todos": [{"id": "1", "content": "x", "status": "pending"}]}),
            "alpha",
        );
        let fresh = TodoStore::new(dir.path().join("todos"));
        assert_eq!(ids(&fresh.handle(&json!({}), "alpha")), vec!["1"]);
        assert!(ids(&fresh.handle(&json!({}), "beta")).is_empty());
    }

    #[test]
    fn todos_as_json_string_and_wrong_types() {
        let (_d, s) = store();
        let r = s.handle(
            &json!({"todos": "[{\"id\":\"1\",\"content\":\"x\",\"status\":\"pending\"}]"}),
            "s",
        );
        assert_eq!(ids(&r), vec!["1"]);
        assert!(s.handle(&json!({"todos": "nope"}), "s")["error"].is_string());
        assert_eq!(
            s.handle(&json!({"todos": {"id": "1"}}), "s")["error"],
            "todos must be a list, got object"
        );
    }

    #[test]
    fn long_content_is_cut_and_list_is_capped() {
        let (_d, s) = store();
        let long = "x".repeat(5000);
        let many: Vec<Value> = (0..300)
            .map(|i| json!({"id": i.to_string(), "content": long, "status": "pending"}))
            .collect();
        let r = s.handle(&json!({"todos": many}), "s");
        assert_eq!(r["summary"]["total"], MAX_ITEMS);
        let content = r["todos"][0]["content"].as_str().unwrap();
        assert_eq!(content.chars().count(), MAX_CONTENT_CHARS);
        assert!(content.ends_with(CUT_MARKER));
    }

    #[test]
    fn merges_from_separate_stores_are_never_lost() {
        // Separate stores stand for separate processes: they share no in-process mutex,
        // only the directory.
        let dir = tempfile::tempdir().unwrap();
        let todos = dir.path().join("todos");
        let threads: Vec<_> = (0..24)
            .map(|i| {
                let todos = todos.clone();
                std::thread::spawn(move || {
                    let store = TodoStore::new(todos);
                    let item = json!({"id": i.to_string(), "content": "x", "status": "pending"});
                    let r = store.handle(&json!({"merge": true, "todos": [item]}), "s");
                    assert!(r["error"].is_null(), "{r}");
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let fresh = TodoStore::new(todos);
        let mut got = ids(&fresh.handle(&json!({}), "s"));
        got.sort_by_key(|id| id.parse::<u32>().unwrap());
        let want: Vec<String> = (0..24).map(|i: u32| i.to_string()).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn injection_lists_only_active_items() {
        let (_d, s) = store();
        s.handle(&json!({"todos": [{"id": "1", "content": "done", "status": "completed"}, {"id": "2", "content": "doing", "status": "in_progress"}]}), "s");
        assert_eq!(
            s.format_for_injection("s").unwrap(),
            "[Your active task list was preserved across context compression]\n- [>] 2. doing (in_progress)"
        );
        assert!(s.format_for_injection("other").is_none());
    }
}
