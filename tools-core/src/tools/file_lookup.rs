//! Results the file tools share for paths that do not work out: "not found" with
//! suggestions of similarly named files, and I/O failures in words the model can act on.

use std::io;
use std::path::Path;

use serde_json::{Value, json};

use crate::files::{FileKind, FileSystem, is_file_changed};
use crate::result::tool_error;

/// At most this many directory entries are scored for suggestions.
const MAX_SCORED_ENTRIES: usize = 5_000;

/// `{"error": "File not found: …", "similar_files": [...]}` (suggestions only when some
/// sibling's name resembles the missing one).
pub fn not_found(fs: &dyn FileSystem, resolved: &Path, shown: &str) -> Value {
    let mut result = tool_error(format!("File not found: {shown}"));
    let similar = similar_files(fs, resolved, shown);
    if !similar.is_empty()
        && let Some(obj) = result.as_object_mut()
    {
        obj.insert("similar_files".into(), json!(similar));
    }
    result
}

/// Up to five siblings of `resolved` whose names resemble its name, best first, shown
/// with the same directory prefix the caller used.
pub fn similar_files(fs: &dyn FileSystem, resolved: &Path, shown: &str) -> Vec<String> {
    let (Some(parent), Some(wanted)) = (resolved.parent(), resolved.file_name()) else {
        return Vec::new();
    };
    let Ok(entries) = fs.list_dir(parent) else {
        return Vec::new();
    };
    let wanted = wanted.to_string_lossy().to_lowercase();
    let (wanted_stem, wanted_ext) = split_ext(&wanted);
    let mut scored: Vec<(u8, String)> = entries
        .into_iter()
        .take(MAX_SCORED_ENTRIES)
        .filter(|e| e.kind != FileKind::Other)
        .filter_map(|e| {
            let score = name_score(&wanted, wanted_stem, wanted_ext, &e.name.to_lowercase());
            (score > 0).then_some((score, e.name))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let prefix = match shown.rfind('/') {
        Some(i) => &shown[..=i],
        None => "",
    };
    scored
        .into_iter()
        .take(5)
        .map(|(_, name)| format!("{prefix}{name}"))
        .collect()
}

fn split_ext(name: &str) -> (&str, &str) {
    match name.rfind('.') {
        Some(i) if i > 0 => (&name[..i], &name[i..]),
        _ => (name, ""),
    }
}

/// Hermes' scoring: same name 100, same stem 90, prefix 70, contains 60, contained 40,
/// same extension with enough shared letters 30.
fn name_score(wanted: &str, wanted_stem: &str, wanted_ext: &str, candidate: &str) -> u8 {
    let (stem, ext) = split_ext(candidate);
    if candidate == wanted {
        100
    } else if stem == wanted_stem {
        90
    } else if candidate.starts_with(wanted) || wanted.starts_with(candidate) {
        70
    } else if candidate.contains(wanted) {
        60
    } else if wanted.contains(candidate) && candidate.len() > 2 {
        40
    } else if !wanted_ext.is_empty() && ext == wanted_ext {
        let a: std::collections::BTreeSet<char> = wanted.chars().collect();
        let b: std::collections::BTreeSet<char> = candidate.chars().collect();
        let common = a.intersection(&b).count();
        if common * 10 >= wanted.len().max(candidate.len()) * 4 {
            30
        } else {
            0
        }
    } else {
        0
    }
}

/// An error result for an I/O failure while doing `verb` ("read", "write", ...) on
/// `shown`.
pub fn io_failure(verb: &str, shown: &str, err: &io::Error) -> Value {
    match err.kind() {
        io::ErrorKind::PermissionDenied => {
            tool_error(format!("Permission denied: cannot {verb} '{shown}'"))
        }
        io::ErrorKind::IsADirectory => tool_error(format!(
            "Cannot {verb} '{shown}': it is a directory, not a file"
        )),
        _ => tool_error(format!("Cannot {verb} '{shown}': {err}")),
    }
}

/// An error result for a failed write of `shown`: "file changed, re-read it" when the
/// file was modified since it was read, a retry hint when a symlink appeared in the
/// path during the write, else [`io_failure`].
pub fn write_failure(shown: &str, err: &io::Error) -> Value {
    if is_file_changed(err) {
        return tool_error(changed_message(shown));
    }
    #[cfg(unix)]
    if err
        .get_ref()
        .is_some_and(|inner| inner.is::<crate::files::SymlinkInPath>())
    {
        return tool_error(format!(
            "Cannot write '{shown}': a directory on its path was replaced by a symbolic \
             link while writing; nothing was written. Check the path and retry."
        ));
    }
    io_failure("write", shown, err)
}

/// "File changed, re-read it", for `shown`.
pub fn changed_message(shown: &str) -> String {
    format!(
        "File changed: '{shown}' was modified after it was read (by another process or \
         tool call); nothing was written, so those changes are not lost. Please re-read it \
         with read_file and redo the edit."
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::LocalFileSystem;

    #[test]
    fn suggests_similar_names_best_first() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["config.yaml", "config_old.yml", "main.rs", "other.txt"] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        let fs = LocalFileSystem::new(dir.path());
        let got = similar_files(&fs, &dir.path().join("config.yml"), "cfg/config.yml");
        assert_eq!(got, vec!["cfg/config.yaml", "cfg/config_old.yml"]);
        let value = not_found(&fs, &dir.path().join("zzz"), "zzz");
        assert_eq!(value, json!({"error": "File not found: zzz"}));
    }
}
