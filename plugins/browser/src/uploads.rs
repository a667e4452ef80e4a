//! Which files `browser_cdp`'s `DOM.setFileInputFiles` may hand to a page: an upload is
//! a read of the file by whoever runs the page, so it follows read_file's rules — the
//! file must be inside the workspace (`upload_dir`, default the directory toolhost runs
//! in; symlinks resolved) and must not be a secret file.
//!
//! The plugin cannot see the host's `[files] secret_files` setting, so the secret check
//! here is a superset of its default list: every hidden file or file under a hidden
//! directory (`.env*`, `.envrc`, `.netrc`, `.npmrc`, `.ssh/`, `.aws/`, `.docker/`, …),
//! keys and keystores by extension, SSH private keys by name, `*.env`,
//! `credentials.json` and `service-account*.json`. docs/hermes/browser.md, "browser_cdp".

use std::path::{Component, Path, PathBuf};

use crate::error::BrowserError;
use crate::settings::Settings;

/// Extensions of keys and keystores.
const KEY_EXTENSIONS: [&str; 8] = ["pem", "key", "p12", "pfx", "keystore", "jks", "ppk", "env"];

/// SSH private keys and credential files, by name.
const SECRET_NAMES: [&str; 5] = [
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "credentials.json",
];

/// The workspace uploads may come from, canonical.
fn workspace(settings: &Settings) -> Result<PathBuf, BrowserError> {
    let dir = match &settings.upload_dir {
        Some(dir) => dir.clone(),
        None => std::env::current_dir()?,
    };
    Ok(dir.canonicalize()?)
}

/// True when `relative` (below the workspace) names a secret file.
pub fn is_secret(relative: &Path) -> bool {
    let hidden = relative.components().any(|c| match c {
        Component::Normal(name) => name.to_string_lossy().starts_with('.'),
        _ => false,
    });
    let name = relative
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let extension = relative
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    hidden
        || KEY_EXTENSIONS.contains(&extension.as_str())
        || SECRET_NAMES.contains(&name.as_str())
        || (name.starts_with("service-account") && name.ends_with(".json"))
}

/// The canonical paths of `files` when every one may be uploaded; otherwise why not.
pub fn check(settings: &Settings, files: &[String]) -> Result<Vec<String>, BrowserError> {
    let root = workspace(settings)?;
    files
        .iter()
        .map(|file| {
            let refuse = |reason: &str| {
                BrowserError::Refused(format!("DOM.setFileInputFiles: {file:?} {reason}"))
            };
            let written = root.join(file);
            let real = written
                .canonicalize()
                .map_err(|e| refuse(&format!("cannot be read ({e})")))?;
            let relative = real.strip_prefix(&root).map_err(|_| {
                refuse(&format!(
                    "is outside the workspace {} (uploads come from the workspace only)",
                    root.display()
                ))
            })?;
            let as_written = written.strip_prefix(&root).unwrap_or(Path::new(file));
            if is_secret(relative) || is_secret(as_written) {
                return Err(refuse(
                    "is a secret file (environment file, key or credential store) and is not uploaded",
                ));
            }
            if !real.is_file() {
                return Err(refuse("is not a regular file"));
            }
            Ok(real.to_string_lossy().into_owned())
        })
        .collect()
}
