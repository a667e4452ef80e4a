//! The audit log: one JSON object per line, appended.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use toolhost_plugin_api::{ApprovalEvent, ToolCallRecord, Value, json, tracing};

/// An open audit log.
pub struct AuditLog {
    file: Mutex<File>,
    log_args: bool,
}

impl AuditLog {
    /// Open (create) `path` for appending.
    pub fn open(path: &Path, log_args: bool) -> Result<Self, String> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| format!("cannot open audit log {}: {e}", path.display()))?;
        Ok(AuditLog {
            file: Mutex::new(file),
            log_args,
        })
    }

    fn write(&self, mut entry: Value) {
        if let Value::Object(map) = &mut entry {
            map.insert("ts".into(), json!(timestamp()));
        }
        let mut line = entry.to_string();
        line.push('\n');
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        // One write per line: with O_APPEND, concurrent writers never interleave lines.
        if let Err(e) = file.write_all(line.as_bytes()) {
            tracing::warn!(error = %e, "cannot write the audit log");
        }
    }

    /// Record a finished call.
    pub fn tool_call(&self, record: &ToolCallRecord) {
        let error = serde_json::from_str::<Value>(&record.result)
            .ok()
            .and_then(|v| v.get("error").filter(|e| !e.is_null()).cloned());
        self.write(json!({
            "event": "tool_call",
            "tool": record.tool,
            "args": if self.log_args { record.args.clone() } else { Value::Null },
            "status": record.status,
            "duration_ms": record.duration_ms,
            "result_chars": record.result.chars().count(),
            "error": error,
            "task_id": record.context.task_id,
            "session_id": record.context.session_id,
            "tool_call_id": record.context.tool_call_id,
        }));
    }

    /// Record an approval request or decision.
    pub fn approval(&self, event_name: &str, event: &ApprovalEvent) {
        self.write(json!({
            "event": event_name,
            "command": event.command,
            "description": event.description,
            "rule_keys": event.rule_keys,
            "session_key": event.session_key,
            "surface": event.surface,
            "tool_call_id": event.tool_call_id,
            "choice": event.choice,
        }));
    }
}

/// Now as RFC 3339 UTC with milliseconds.
fn timestamp() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let secs = now.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        now.subsec_millis()
    )
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
    }

    #[test]
    fn writes_one_json_object_per_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/log.jsonl");
        let log = AuditLog::open(&path, false).unwrap();
        let record: ToolCallRecord = serde_json::from_value(json!({
            "tool": "t", "args": {"secret": 1}, "result": "{\"error\":\"bad\"}",
            "status": "error", "duration_ms": 1.5
        }))
        .unwrap();
        log.tool_call(&record);
        log.approval("approval_request", &ApprovalEvent::default());
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["tool"], "t");
        assert_eq!(lines[0]["args"], Value::Null);
        assert_eq!(lines[0]["error"], "bad");
        assert_eq!(lines[0]["status"], "error");
        assert_eq!(lines[1]["event"], "approval_request");
    }
}
