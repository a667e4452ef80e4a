//! The bundled plugins travel with the binary: they are found next to the executable
//! (`discovery`), so a `toolhost` copied alone onto `PATH` silently loses them. This
//! notices that case and says so once per command on stderr, with the install that
//! keeps binary and plugins together (README "Installing"). No warning when bundled
//! plugins are switched off (`[plugins] bundled = false`) or pointed elsewhere
//! (`TOOLHOST_BUNDLED_PLUGINS`).

use std::path::{Path, PathBuf};

use super::config::PluginsSettings;
use super::discovery::{BUNDLED_ENV, scan_dir};

/// The directory that should hold the bundled plugins and holds none.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "no bundled plugins next to the toolhost binary in {}: a binary copied on its own \
     leaves them behind. Install binary and plugins together (README \"Installing\"), \
     or set `[plugins] bundled = false` to go without them",
    .dir.display()
)]
pub struct MissingBundle {
    /// Where they were looked for (the binary's directory).
    pub dir: PathBuf,
}

/// `Some` when bundled plugins are wanted from the binary's directory and there are none.
pub fn missing_bundle(config: &PluginsSettings) -> Option<MissingBundle> {
    if !config.bundled || std::env::var_os(BUNDLED_ENV).is_some() {
        return None;
    }
    let exe = std::env::current_exe().ok()?;
    missing_in(exe.parent()?)
}

/// `Some` when `dir` holds no bundled plugin (library or `plugins/<name>/`).
fn missing_in(dir: &Path) -> Option<MissingBundle> {
    scan_dir(dir, true).is_empty().then(|| MissingBundle {
        dir: dir.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_binary_directory_is_a_missing_bundle() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("toolhost"), b"").unwrap();
        let missing = missing_in(dir.path()).unwrap();
        assert!(
            missing.to_string().contains("README \"Installing\""),
            "{missing}"
        );
    }

    #[test]
    fn a_bundled_library_or_plugin_directory_is_a_bundle() {
        let dir = tempfile::tempdir().unwrap();
        let lib = format!(
            "{}toolhost_plugin_x{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        );
        std::fs::write(dir.path().join(lib), b"").unwrap();
        assert_eq!(missing_in(dir.path()), None);
        let other = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(other.path().join("plugins/x")).unwrap();
        assert_eq!(missing_in(other.path()), None);
    }
}
