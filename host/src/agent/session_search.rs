//! The `session_search` tool over the session database, in Hermes' four calling shapes
//! (the mode is inferred from the arguments):
//!
//! - **discover** (`query`): FTS5 search, hits deduplicated by session lineage (a child
//!   session counts as its root), the current session's lineage skipped; each result has
//!   the snippet, ±5 messages around the hit (the hit flagged `anchor`) and the first
//!   and last 3 user/assistant messages as bookends;
//! - **scroll** (`session_id` + `around_message_id`): ±`window` (1–20) messages;
//! - **read** (`session_id`): the whole session, first 20 + last 10 when longer;
//! - **browse** (nothing): recent sessions with previews.
//!
//! Differences from Hermes (docs/hermes/agent-loop.md): no profiles (one database per
//! home; `profile` is refused), no title matching, timestamps shown in UTC.

use std::collections::HashSet;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use tools_core::tools::args::{lenient, parse};

use super::sessions::{SessionError, SessionInfo, SessionStore, StoredMessage};

/// FTS rows scanned before deduplication.
const SCAN_LIMIT: usize = 300;
/// Messages each side of a discovery hit.
const HIT_WINDOW: usize = 5;
/// Messages in each bookend.
const BOOKEND: usize = 3;

/// Arguments of `session_search`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct SessionSearchArgs {
    query: Option<String>,
    /// Read leniently, as Hermes does (`int(limit)`, else 3).
    #[serde(deserialize_with = "lenient::int")]
    limit: Option<i64>,
    sort: Option<String>,
    session_id: Option<String>,
    around_message_id: Option<i64>,
    window: Option<i64>,
    role_filter: Option<String>,
    profile: Option<String>,
}

/// Run `session_search` with `args` for the session `current` (its lineage is skipped).
pub fn session_search(store: &SessionStore, args: &Value, current: &str) -> Value {
    let args: SessionSearchArgs = match parse(args.clone()) {
        Ok(args) => args,
        Err(err) => return failure(err.failure_message()),
    };
    match run(store, &args, current) {
        Ok(value) => value,
        Err(err) => failure(format!("Search failed: {err}")),
    }
}

fn failure(message: String) -> Value {
    json!({"success": false, "error": message})
}

fn run(
    store: &SessionStore,
    args: &SessionSearchArgs,
    current: &str,
) -> Result<Value, SessionError> {
    if args
        .profile
        .as_deref()
        .is_some_and(|p| !p.trim().is_empty())
    {
        return Ok(failure(
            "profile is not supported: toolhost keeps one session database per home".into(),
        ));
    }
    let session_id = args
        .session_id
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty());
    if let (Some(id), Some(anchor)) = (session_id, args.around_message_id) {
        let window = args.window.unwrap_or(5).clamp(1, 20) as usize;
        return scroll(store, id, anchor, window, current);
    }
    if let Some(id) = session_id {
        return read(store, id);
    }
    let limit = args.limit.unwrap_or(3).clamp(1, 10) as usize;
    match args
        .query
        .as_deref()
        .map(str::trim)
        .filter(|q| !q.is_empty())
    {
        None => browse(store, limit, current),
        Some(query) => discover(store, query, args, limit, current),
    }
}

fn lineage_root(store: &SessionStore, id: &str) -> Result<String, SessionError> {
    let mut seen = HashSet::new();
    let mut cur = id.to_string();
    while seen.insert(cur.clone()) {
        match store.get(&cur)?.and_then(|s| s.parent_session_id) {
            Some(parent) => cur = parent,
            None => break,
        }
    }
    Ok(cur)
}

fn discover(
    store: &SessionStore,
    query: &str,
    args: &SessionSearchArgs,
    limit: usize,
    current: &str,
) -> Result<Value, SessionError> {
    let roles: Vec<String> = match args.role_filter.as_deref() {
        Some(f) if !f.trim().is_empty() => f
            .split(',')
            .map(|r| r.trim().to_string())
            .filter(|r| !r.is_empty())
            .collect(),
        _ => vec!["user".into(), "assistant".into()],
    };
    let hits = match store.search(query, &roles, SCAN_LIMIT) {
        Ok(hits) => hits,
        // FTS5 syntax errors are the model's to fix.
        Err(SessionError::Db { source, .. }) => {
            return Ok(failure(format!("Search failed: {source}")));
        }
        Err(other) => return Err(other),
    };
    let current_root = if current.is_empty() {
        None
    } else {
        Some(lineage_root(store, current)?)
    };
    let mut roots = Vec::new();
    let mut chosen = Vec::new();
    for hit in hits {
        if chosen.len() >= limit {
            break;
        }
        let root = lineage_root(store, &hit.session_id)?;
        if current_root.as_deref() == Some(root.as_str()) || hit.session_id == current {
            continue;
        }
        if !roots.contains(&root) {
            roots.push(root.clone());
            chosen.push((root, hit));
        }
    }
    if args.sort.as_deref().map(str::trim) == Some("newest")
        || args.sort.as_deref().map(str::trim) == Some("oldest")
    {
        let newest = args.sort.as_deref().map(str::trim) == Some("newest");
        chosen.sort_by(|a, b| {
            let order = a.1.message_id.cmp(&b.1.message_id);
            if newest { order.reverse() } else { order }
        });
    }
    let sessions_searched = chosen.len();
    if chosen.is_empty() {
        return Ok(json!({
            "success": true, "mode": "discover", "query": query, "results": [],
            "count": 0, "message": "No matching sessions found.",
        }));
    }
    let mut results = Vec::new();
    for (root, hit) in chosen {
        let meta = store.get(&hit.session_id)?;
        let all = store.stored(&hit.session_id)?;
        let (window, before, after) = around(&all, hit.message_id, HIT_WINDOW);
        let talk: Vec<&StoredMessage> = all
            .iter()
            .filter(|m| m.role == "user" || m.role == "assistant")
            .collect();
        let start: Vec<Value> = talk.iter().take(BOOKEND).map(|m| shape(m, None)).collect();
        let end: Vec<Value> = talk
            .iter()
            .skip(talk.len().saturating_sub(BOOKEND))
            .map(|m| shape(m, None))
            .collect();
        let mut entry = meta_fields(meta.as_ref());
        entry.insert("session_id".into(), json!(hit.session_id));
        entry.insert("matched_role".into(), json!(hit.role));
        entry.insert("match_message_id".into(), json!(hit.message_id));
        entry.insert("snippet".into(), json!(hit.snippet));
        entry.insert("bookend_start".into(), Value::Array(start));
        entry.insert(
            "messages".into(),
            window
                .iter()
                .map(|m| shape(m, Some(hit.message_id)))
                .collect(),
        );
        entry.insert("bookend_end".into(), Value::Array(end));
        entry.insert("messages_before".into(), json!(before));
        entry.insert("messages_after".into(), json!(after));
        if root != hit.session_id {
            entry.insert("parent_session_id".into(), json!(root));
        }
        results.push(Value::Object(entry));
    }
    Ok(json!({
        "success": true, "mode": "discover", "query": query,
        "count": results.len(), "results": results, "sessions_searched": sessions_searched,
    }))
}

fn scroll(
    store: &SessionStore,
    id: &str,
    anchor: i64,
    window: usize,
    current: &str,
) -> Result<Value, SessionError> {
    if !current.is_empty() && lineage_root(store, id)? == lineage_root(store, current)? {
        return Ok(failure(
            "scroll rejected: anchor lives in the current session lineage (already in your active context)".into(),
        ));
    }
    let Some(meta) = store.get(id)? else {
        return Ok(failure(format!("session_id not found: {id}")));
    };
    let all = store.stored(id)?;
    let (slice, before, after) = around(&all, anchor, window);
    if slice.is_empty() {
        return Ok(failure(format!(
            "around_message_id {anchor} not in session_id {id}"
        )));
    }
    Ok(json!({
        "success": true, "mode": "scroll", "session_id": id, "around_message_id": anchor,
        "session_meta": session_meta(&meta), "window": window,
        "messages": slice.iter().map(|m| shape(m, Some(anchor))).collect::<Vec<_>>(),
        "messages_before": before, "messages_after": after,
    }))
}

fn read(store: &SessionStore, id: &str) -> Result<Value, SessionError> {
    const HEAD: usize = 20;
    const TAIL: usize = 10;
    let Some(meta) = store.get(id)? else {
        return Ok(failure(format!("session_id not found: {id}")));
    };
    let all = store.stored(id)?;
    let total = all.len();
    let truncated = total > HEAD + TAIL;
    let shown: Vec<Value> = if truncated {
        all[..HEAD]
            .iter()
            .chain(&all[total - TAIL..])
            .map(|m| shape(m, None))
            .collect()
    } else {
        all.iter().map(|m| shape(m, None)).collect()
    };
    let mut out = json!({
        "success": true, "mode": "read", "session_id": id,
        "session_meta": session_meta(&meta), "message_count": total,
        "truncated": truncated, "messages": shown,
    });
    if truncated {
        out["message"] = json!(format!(
            "Session has {total} messages; showing first {HEAD} + last {TAIL}. Pass \
             around_message_id (any id above) to scroll the middle."
        ));
    }
    Ok(out)
}

fn browse(store: &SessionStore, limit: usize, current: &str) -> Result<Value, SessionError> {
    let current_root = if current.is_empty() {
        None
    } else {
        Some(lineage_root(store, current)?)
    };
    let results: Vec<Value> = store
        .list(limit + 5, false)?
        .into_iter()
        .filter(|s| s.parent_session_id.is_none())
        .filter(|s| s.id != current && current_root.as_deref() != Some(s.id.as_str()))
        .take(limit)
        .map(|s| {
            json!({
                "session_id": s.id, "title": s.title, "source": s.source,
                "started_at": format_time(s.started_at), "last_active": format_time(s.last_active),
                "message_count": s.message_count, "preview": s.preview,
            })
        })
        .collect();
    let n = results.len();
    Ok(json!({
        "success": true, "mode": "browse", "results": results, "count": n,
        "message": format!("Showing {n} most recent sessions. Pass a query= to search, or session_id+around_message_id to scroll."),
    }))
}

/// The messages within `window` of `anchor`, and how many lie before and after them.
fn around(all: &[StoredMessage], anchor: i64, window: usize) -> (&[StoredMessage], usize, usize) {
    let Some(pos) = all.iter().position(|m| m.id == anchor) else {
        return (&[], 0, 0);
    };
    let start = pos.saturating_sub(window);
    let end = (pos + window + 1).min(all.len());
    (&all[start..end], start, all.len() - end)
}

fn shape(m: &StoredMessage, anchor: Option<i64>) -> Value {
    let mut entry = Map::new();
    entry.insert("id".into(), json!(m.id));
    entry.insert("role".into(), json!(m.role));
    entry.insert("content".into(), json!(m.content));
    entry.insert("timestamp".into(), json!(m.timestamp));
    if let Some(name) = &m.tool_name {
        entry.insert("tool_name".into(), json!(name));
    }
    if let Some(calls) = &m.tool_calls {
        entry.insert("tool_calls".into(), calls.clone());
    }
    if let Some(id) = &m.tool_call_id {
        entry.insert("tool_call_id".into(), json!(id));
    }
    if anchor == Some(m.id) {
        entry.insert("anchor".into(), json!(true));
    }
    Value::Object(entry)
}

fn session_meta(s: &SessionInfo) -> Value {
    json!({"when": format_time(s.started_at), "source": s.source, "model": s.model, "title": s.title})
}

fn meta_fields(s: Option<&SessionInfo>) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert(
        "when".into(),
        json!(s.map_or("unknown".into(), |s| format_time(s.started_at))),
    );
    m.insert(
        "source".into(),
        json!(s.map_or("unknown", |s| s.source.as_str())),
    );
    m.insert(
        "model".into(),
        json!(
            s.and_then(|s| s.model.clone())
                .unwrap_or_else(|| "unknown".into())
        ),
    );
    m.insert("title".into(), json!(s.and_then(|s| s.title.clone())));
    m
}

/// `December 01, 2026 at 09:05 PM UTC`.
fn format_time(unix: f64) -> String {
    const MONTHS: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    let secs = unix as i64;
    let (y, m, d) = super::sessions::civil_from_days(secs.div_euclid(86_400));
    let rest = secs.rem_euclid(86_400);
    let (h, min) = (rest / 3600, rest % 3600 / 60);
    let (h12, ampm) = match h {
        0 => (12, "AM"),
        1..=11 => (h, "AM"),
        12 => (12, "PM"),
        _ => (h - 12, "PM"),
    };
    let month = MONTHS[((m - 1).clamp(0, 11)) as usize];
    format!("{month} {d:02}, {y} at {h12:02}:{min:02} {ampm} UTC")
}

#[cfg(test)]
#[path = "session_search_tests.rs"]
mod tests;
