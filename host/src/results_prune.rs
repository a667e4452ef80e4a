//! `<home>/results` has bounds: a size cap per saved result, a cap for the whole
//! folder and an age limit (`[results]` in `config.toml`, docs/plugin-isolation.md
//! "Resource bounds").
//!
//! ```toml
//! [results]
//! max_file_mb = 64      # a saved result keeps at most its first 64 MiB (0 = no cap)
//! max_total_mb = 1024   # the folder is pruned, oldest first, down to this (0 = no cap)
//! max_age_days = 7      # saved results older than this are removed (0 = kept)
//! ```
//!
//! Hermes never prunes its results folder; one turn with a huge tool result left
//! 727 MB behind. [`prune`] runs when toolhost starts and after every result it saves
//! (oldest files first, never the file just written); it walks the folder without
//! following links and removes files only, never directories.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::Deserialize;

const MIB: u64 = 1024 * 1024;
/// How deep below the results folder files are looked for (`mcp-media/<server>/…`).
const MAX_DEPTH: usize = 4;

/// `[results]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default)]
pub struct ResultsSettings {
    /// Largest saved result, in MiB (the rest is cut off and the preview says so);
    /// 0 = no cap.
    pub max_file_mb: u64,
    /// Largest total size of the folder, in MiB; 0 = no cap.
    pub max_total_mb: u64,
    /// Age, in days, after which a saved result is removed; 0 = never.
    pub max_age_days: f64,
}

impl Default for ResultsSettings {
    fn default() -> Self {
        ResultsSettings {
            max_file_mb: 64,
            max_total_mb: 1024,
            max_age_days: 7.0,
        }
    }
}

impl ResultsSettings {
    /// The per-file cap in bytes, if any.
    pub fn max_file_bytes(&self) -> Option<usize> {
        (self.max_file_mb > 0)
            .then(|| usize::try_from(self.max_file_mb.saturating_mul(MIB)).unwrap_or(usize::MAX))
    }

    fn max_total_bytes(&self) -> Option<u64> {
        (self.max_total_mb > 0).then(|| self.max_total_mb.saturating_mul(MIB))
    }

    fn max_age(&self) -> Option<Duration> {
        Duration::try_from_secs_f64(self.max_age_days * 86_400.0)
            .ok()
            .filter(|d| !d.is_zero())
    }
}

/// What one pruning pass removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Files removed.
    pub files: usize,
    /// Bytes freed.
    pub bytes: u64,
}

struct Saved {
    path: PathBuf,
    len: u64,
    modified: SystemTime,
}

/// Remove results older than the age limit, then the oldest until the folder fits its
/// cap; `keep` (the file just written) is never removed.
pub fn prune(dir: &Path, settings: &ResultsSettings, keep: Option<&Path>) -> Pruned {
    let mut files = Vec::new();
    collect(dir, 0, &mut files);
    files.sort_by_key(|f| f.modified);
    let now = SystemTime::now();
    let mut total: u64 = files.iter().map(|f| f.len).sum();
    let mut pruned = Pruned::default();
    for file in &files {
        if keep == Some(file.path.as_path()) {
            continue;
        }
        let too_old = settings
            .max_age()
            .is_some_and(|age| now.duration_since(file.modified).is_ok_and(|d| d > age));
        let over_cap = settings.max_total_bytes().is_some_and(|cap| total > cap);
        if !(too_old || over_cap) {
            continue;
        }
        if std::fs::remove_file(&file.path).is_ok() {
            total = total.saturating_sub(file.len);
            pruned.files += 1;
            pruned.bytes += file.len;
        }
    }
    if pruned.files > 0 {
        tracing::debug!(dir = %dir.display(), files = pruned.files, bytes = pruned.bytes, "pruned saved results");
    }
    pruned
}

/// Regular files under `dir` (links are not followed), up to [`MAX_DEPTH`] levels.
fn collect(dir: &Path, depth: usize, out: &mut Vec<Saved>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        if meta.is_dir() && depth < MAX_DEPTH {
            collect(&entry.path(), depth + 1, out);
        } else if meta.is_file() {
            out.push(Saved {
                path: entry.path(),
                len: meta.len(),
                modified: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_aged(path: &Path, bytes: usize, age: Duration) {
        std::fs::write(path, vec![b'x'; bytes]).unwrap();
        let file = std::fs::File::options().write(true).open(path).unwrap();
        file.set_modified(SystemTime::now() - age).unwrap();
    }

    const HOUR: Duration = Duration::from_secs(3600);

    #[test]
    fn results_past_the_age_limit_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        write_aged(&dir.path().join("old.txt"), 10, 9 * 24 * HOUR);
        write_aged(&dir.path().join("new.txt"), 10, HOUR);
        let pruned = prune(dir.path(), &ResultsSettings::default(), None);
        assert_eq!(
            pruned,
            Pruned {
                files: 1,
                bytes: 10
            }
        );
        assert!(!dir.path().join("old.txt").exists());
        assert!(dir.path().join("new.txt").exists());
    }

    #[test]
    fn the_oldest_go_first_until_the_folder_fits() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("mcp-media");
        std::fs::create_dir(&sub).unwrap();
        write_aged(&sub.join("a.png"), MIB as usize, 3 * HOUR);
        write_aged(&dir.path().join("b.txt"), MIB as usize, 2 * HOUR);
        write_aged(&dir.path().join("c.txt"), MIB as usize, HOUR);
        let settings = ResultsSettings {
            max_total_mb: 2,
            ..ResultsSettings::default()
        };
        assert_eq!(prune(dir.path(), &settings, None).files, 1);
        assert!(!sub.join("a.png").exists());
        assert!(dir.path().join("b.txt").exists());
        assert!(sub.is_dir(), "directories are never removed");
    }

    #[test]
    fn the_file_just_written_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.txt");
        write_aged(&big, 2 * MIB as usize, 10 * 24 * HOUR);
        let settings = ResultsSettings {
            max_total_mb: 1,
            ..ResultsSettings::default()
        };
        assert_eq!(prune(dir.path(), &settings, Some(&big)).files, 0);
        assert!(big.exists());
    }

    #[cfg(unix)]
    #[test]
    fn links_are_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        write_aged(&outside.path().join("precious"), 10, 30 * 24 * HOUR);
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
        prune(dir.path(), &ResultsSettings::default(), None);
        assert!(outside.path().join("precious").exists());
    }

    #[test]
    fn zero_means_no_limit() {
        let off = ResultsSettings {
            max_file_mb: 0,
            max_total_mb: 0,
            max_age_days: 0.0,
        };
        assert_eq!(off.max_file_bytes(), None);
        assert_eq!(off.max_total_bytes(), None);
        assert_eq!(off.max_age(), None);
    }
}
