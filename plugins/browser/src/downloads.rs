//! Where the browser saves downloads: one folder per task under
//! `<home>/browser_downloads` (or `download_dir`). The folder is set when the browser
//! starts, and `browser_cdp`'s `Browser.setDownloadBehavior` /
//! `Page.setDownloadBehavior` are rewritten to it (`cdp_policy.rs`): a page or the model
//! must not be able to write into `<home>/state`, `/etc` or anywhere else.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::error::BrowserError;
use crate::settings::Settings;

/// The root of the per-task folders.
fn root(settings: &Settings) -> PathBuf {
    match (&settings.download_dir, &settings.home) {
        (Some(dir), _) => dir.clone(),
        (None, Some(home)) => home.join("browser_downloads"),
        (None, None) => std::env::temp_dir().join("toolhost-browser-downloads"),
    }
}

/// `task` as one safe path component: `[A-Za-z0-9._-]` kept, anything else `_`, at
/// most 64 characters, never empty, `.` or `..`.
pub fn component(task: &str) -> String {
    let name: String = task
        .chars()
        .take(64)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    match name.as_str() {
        "" | "." | ".." => "default".to_string(),
        _ => name,
    }
}

/// The task's download folder, created (owner-only) and canonical.
pub fn folder(settings: &Settings, task: &str) -> Result<PathBuf, BrowserError> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let dir = root(settings).join(component(task));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)?;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
    Ok(dir.canonicalize()?)
}

/// `Browser.setDownloadBehavior` parameters: `behavior` into `folder`.
pub fn behavior(behavior: &str, folder: &Path) -> Value {
    json!({ "behavior": behavior, "downloadPath": folder, "eventsEnabled": true })
}

/// The model's `behavior` as one the folder is kept for: `deny` stays, `allowAndName`
/// stays, everything else (`allow`, `default`, unknown) is `allow`.
pub fn forced_behavior(asked: Option<&str>) -> &'static str {
    match asked {
        Some("deny") => "deny",
        Some("allowAndName") => "allowAndName",
        _ => "allow",
    }
}
