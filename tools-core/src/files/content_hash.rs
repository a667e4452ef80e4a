//! The fingerprint of a file's content, for "changed since it was read" detection.
//!
//! `read_file` reports it (`content_hash`), `write_file` takes it back
//! (`expected_hash`), and `patch` keeps the one of the bytes it edited: a write fails
//! with [`FileChanged`] instead of overwriting edits made in between by another writer.
//! SHA-256, shown as `sha256:<hex>`.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// SHA-256 of a file's bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContentHash([u8; 32]);

/// Prefix of the text form.
const PREFIX: &str = "sha256:";

impl ContentHash {
    /// The hash of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        let mut hasher = ContentHasher::default();
        hasher.update(bytes);
        hasher.finish()
    }

    /// Parse the text form (`sha256:<64 hex digits>`; the prefix is optional).
    pub fn parse(text: &str) -> Option<Self> {
        let hex = text.trim();
        let hex = hex.strip_prefix(PREFIX).unwrap_or(hex);
        if hex.len() != 64 {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(hex.get(i * 2..i * 2 + 2)?, 16).ok()?;
        }
        Some(ContentHash(out))
    }
}

impl fmt::Display for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(PREFIX)?;
        for byte in self.0 {
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

/// Hashes content fed in pieces (a file streamed page by page).
#[derive(Default)]
pub struct ContentHasher(Sha256);

impl ContentHasher {
    /// Feed the next bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The hash of everything fed.
    pub fn finish(self) -> ContentHash {
        ContentHash(self.0.finalize().into())
    }
}

/// A write refused because the file is no longer what the caller read.
#[derive(Debug, thiserror::Error)]
#[error("{} changed since it was read", path.display())]
pub struct FileChanged {
    /// The file.
    pub path: PathBuf,
}

/// The `io::Error` carrying [`FileChanged`] for `path`.
pub fn file_changed(path: &Path) -> io::Error {
    io::Error::other(FileChanged {
        path: path.to_path_buf(),
    })
}

/// True when `err` is a [`FileChanged`] refusal.
pub fn is_file_changed(err: &io::Error) -> bool {
    err.get_ref().is_some_and(|inner| inner.is::<FileChanged>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_form_round_trips_and_matches_the_sha256_test_vector() {
        let hash = ContentHash::of(b"abc");
        let text = hash.to_string();
        assert_eq!(
            text,
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(ContentHash::parse(&text), Some(hash));
        assert_eq!(ContentHash::parse(&text[PREFIX.len()..]), Some(hash));
    }

    #[test]
    fn malformed_text_is_rejected() {
        for bad in ["", "sha256:", "sha256:zz", &"a".repeat(63), &"g".repeat(64)] {
            assert_eq!(ContentHash::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn streamed_hash_equals_one_shot_hash() {
        let mut hasher = ContentHasher::default();
        hasher.update(b"hello ");
        hasher.update(b"world");
        assert_eq!(hasher.finish(), ContentHash::of(b"hello world"));
    }

    #[test]
    fn file_changed_is_recognised_through_io_error() {
        assert!(is_file_changed(&file_changed(Path::new("/x"))));
        assert!(!is_file_changed(&io::Error::other("something else")));
    }
}
