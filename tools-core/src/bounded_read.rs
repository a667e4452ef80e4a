//! Reading a file toolhost trusts — `config.toml`, plugin manifests, `SKILL.md`, state
//! files — with a size limit.
//!
//! A trusted path can still point somewhere hostile: a `config.toml` that is a link to
//! `/dev/zero` once read 7.5 GB in ten seconds. [`read_to_string`] refuses anything
//! that is not a regular file (devices, FIFOs, sockets, directories: opened
//! non-blocking, so a FIFO without a writer cannot hang the host) and any file past its
//! limit, with an error naming the path; it never reads more than `limit + 1` bytes,
//! so a file that grows while being read is refused too.

use std::fs::OpenOptions;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Limit for configuration files (`config.toml`).
pub const CONFIG_LIMIT: u64 = 4 * 1024 * 1024;
/// Limit for manifests (`plugin.toml`, `plugin.yaml`) and other small metadata files.
pub const MANIFEST_LIMIT: u64 = 1024 * 1024;

/// Why a trusted file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BoundedReadError {
    /// Opening or reading failed.
    #[error("cannot read {path}: {source}", path = .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A device, FIFO, socket or directory.
    #[error("{path} is not a regular file", path = .path.display())]
    NotRegular {
        /// The file.
        path: PathBuf,
    },
    /// Larger than the limit.
    #[error("{path} is larger than {limit} bytes", path = .path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The limit, in bytes.
        limit: u64,
    },
    /// Not UTF-8 text.
    #[error("{path} is not UTF-8 text", path = .path.display())]
    NotUtf8 {
        /// The file.
        path: PathBuf,
    },
}

impl BoundedReadError {
    /// True when the file does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, BoundedReadError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}

/// The bytes of the regular file at `path`, when it holds at most `limit` bytes.
pub fn read(path: &Path, limit: u64) -> Result<Vec<u8>, BoundedReadError> {
    let io = |source| BoundedReadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
    }
    let file = options.open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(BoundedReadError::NotRegular {
            path: path.to_path_buf(),
        });
    }
    let too_large = || BoundedReadError::TooLarge {
        path: path.to_path_buf(),
        limit,
    };
    if meta.len() > limit {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

/// The text of the regular file at `path`, when it holds at most `limit` bytes of UTF-8.
pub fn read_to_string(path: &Path, limit: u64) -> Result<String, BoundedReadError> {
    String::from_utf8(read(path, limit)?).map_err(|_| BoundedReadError::NotUtf8 {
        path: path.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_file_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "a = 1\n").unwrap();
        assert_eq!(read_to_string(&path, 6).unwrap(), "a = 1\n");
    }

    #[test]
    fn a_file_past_the_limit_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "a = 1\n").unwrap();
        let err = read_to_string(&path, 5).unwrap_err();
        assert!(
            matches!(err, BoundedReadError::TooLarge { limit: 5, .. }),
            "{err}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_link_to_dev_zero_is_refused_without_reading() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
        let err = read_to_string(&path, CONFIG_LIMIT).unwrap_err();
        assert!(matches!(err, BoundedReadError::NotRegular { .. }), "{err}");
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_without_a_writer_does_not_hang() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plugin.toml");
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success());
        let err = read_to_string(&path, MANIFEST_LIMIT).unwrap_err();
        assert!(matches!(err, BoundedReadError::NotRegular { .. }), "{err}");
    }

    #[test]
    fn a_missing_file_is_not_found() {
        let dir = tempfile::tempdir().unwrap();
        assert!(
            read(&dir.path().join("nope"), 10)
                .unwrap_err()
                .is_not_found()
        );
    }
}
