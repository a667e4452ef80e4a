//! Comment-preserving edits of `config.toml` (`plugins enable`, approvals "always", ...).
//!
//! Edits go through `toml_edit`, so the user's comments, ordering and formatting survive;
//! the file is replaced atomically. A missing file is created.

use std::path::{Path, PathBuf};

use toml_edit::{Array, DocumentMut, Item, Table, Value};

use crate::atomic_file::write_atomic;

/// Why a config edit failed.
#[derive(Debug, thiserror::Error)]
pub enum ConfigEditError {
    /// The file could not be read or written.
    #[error("{path}: {source}", path = .path.display())]
    Io {
        /// The config file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid TOML.
    #[error("{path}: {source}", path = .path.display())]
    Parse {
        /// The config file.
        path: PathBuf,
        /// Parser error (has line and column).
        #[source]
        source: toml_edit::TomlError,
    },
    /// A key on the way is not a table, or the target is not an array.
    #[error("{path}: `{key}` is not a {expected}", path = .path.display())]
    WrongType {
        /// The config file.
        path: PathBuf,
        /// Dotted key.
        key: String,
        /// What was expected there.
        expected: &'static str,
    },
}

fn load(path: &Path) -> Result<DocumentMut, ConfigEditError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(ConfigEditError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    text.parse::<DocumentMut>()
        .map_err(|source| ConfigEditError::Parse {
            path: path.to_path_buf(),
            source,
        })
}

fn save(path: &Path, doc: &DocumentMut) -> Result<(), ConfigEditError> {
    write_atomic(path, doc.to_string().as_bytes()).map_err(|source| ConfigEditError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// The table at `keys` (creating missing tables).
fn table_at<'a>(
    doc: &'a mut DocumentMut,
    keys: &[&str],
    path: &Path,
) -> Result<&'a mut Table, ConfigEditError> {
    let mut table = doc.as_table_mut();
    for (i, key) in keys.iter().enumerate() {
        let item = table.entry(key).or_insert_with(|| {
            let mut t = Table::new();
            t.set_implicit(true);
            Item::Table(t)
        });
        table = item
            .as_table_mut()
            .ok_or_else(|| ConfigEditError::WrongType {
                path: path.to_path_buf(),
                key: keys[..=i].join("."),
                expected: "table",
            })?;
    }
    Ok(table)
}

fn array_at<'a>(
    doc: &'a mut DocumentMut,
    keys: &[&str],
    path: &Path,
) -> Result<&'a mut Array, ConfigEditError> {
    let Some((last, parents)) = keys.split_last() else {
        return Err(ConfigEditError::WrongType {
            path: path.to_path_buf(),
            key: String::new(),
            expected: "key",
        });
    };
    let table = table_at(doc, parents, path)?;
    let item = table
        .entry(last)
        .or_insert_with(|| Item::Value(Value::Array(Array::new())));
    item.as_array_mut()
        .ok_or_else(|| ConfigEditError::WrongType {
            path: path.to_path_buf(),
            key: keys.join("."),
            expected: "array",
        })
}

/// Add `value` to the string array at `keys` (e.g. `["plugins", "enabled"]`) unless it is
/// already there. Returns whether the file changed.
pub fn add_to_array(path: &Path, keys: &[&str], value: &str) -> Result<bool, ConfigEditError> {
    let mut doc = load(path)?;
    let array = array_at(&mut doc, keys, path)?;
    if array.iter().any(|v| v.as_str() == Some(value)) {
        return Ok(false);
    }
    array.push(value);
    save(path, &doc)?;
    Ok(true)
}

/// Remove `value` from the string array at `keys`. Returns whether the file changed.
pub fn remove_from_array(path: &Path, keys: &[&str], value: &str) -> Result<bool, ConfigEditError> {
    let mut doc = load(path)?;
    let array = array_at(&mut doc, keys, path)?;
    let before = array.len();
    array.retain(|v| v.as_str() != Some(value));
    if array.len() == before {
        return Ok(false);
    }
    save(path, &doc)?;
    Ok(true)
}

/// Set the value at `keys` (creating tables on the way).
pub fn set_value(
    path: &Path,
    keys: &[&str],
    value: impl Into<Value>,
) -> Result<(), ConfigEditError> {
    let mut doc = load(path)?;
    let Some((last, parents)) = keys.split_last() else {
        return Ok(());
    };
    let table = table_at(&mut doc, parents, path)?;
    table.insert(last, Item::Value(value.into()));
    save(path, &doc)
}

/// The string array at `keys`, or empty.
pub fn read_array(path: &Path, keys: &[&str]) -> Result<Vec<String>, ConfigEditError> {
    let doc = load(path)?;
    let mut item: &Item = doc.as_item();
    for key in keys {
        match item.get(key) {
            Some(next) => item = next,
            None => return Ok(Vec::new()),
        }
    }
    Ok(item
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_comments_and_layout() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let original = "# my settings\n[plugins]\n# keep this\nenabled = [\"a\"]  # trailing\n\n[other]\nx = 1\n";
        std::fs::write(&path, original).unwrap();
        assert!(add_to_array(&path, &["plugins", "enabled"], "b").unwrap());
        assert!(!add_to_array(&path, &["plugins", "enabled"], "b").unwrap());
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("# my settings"));
        assert!(text.contains("# keep this"));
        assert!(text.contains("# trailing"));
        assert!(text.contains("[other]\nx = 1"));
        assert_eq!(
            read_array(&path, &["plugins", "enabled"]).unwrap(),
            vec!["a", "b"]
        );
        assert!(remove_from_array(&path, &["plugins", "enabled"], "a").unwrap());
        assert_eq!(
            read_array(&path, &["plugins", "enabled"]).unwrap(),
            vec!["b"]
        );
    }

    #[test]
    fn creates_missing_file_and_tables() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/config.toml");
        add_to_array(
            &path,
            &["approvals", "command_allowlist"],
            "recursive delete",
        )
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("[approvals]"), "{text}");
        assert_eq!(
            read_array(&path, &["approvals", "command_allowlist"]).unwrap(),
            vec!["recursive delete"]
        );
    }

    #[test]
    fn malformed_file_is_an_error_with_position() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[plugins\nenabled = 1\n").unwrap();
        let err = add_to_array(&path, &["plugins", "enabled"], "x").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("config.toml"), "{text}");
        assert!(text.contains("line 1"), "{text}");
        // The broken file is left as it was.
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "[plugins\nenabled = 1\n"
        );
    }
}
