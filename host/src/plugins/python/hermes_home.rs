//! The Hermes home of Python plugins: `<home>/python-plugins/hermes-home/`, given to
//! every Python plugin process as `HERMES_HOME`.
//!
//! Hermes' library code resolves its home from `HERMES_HOME`, else `~/.hermes`
//! (`hermes_constants.get_hermes_home`). Without the variable a plugin's state (audit
//! logs, caches, memory files, a whole Hermes home skeleton) would land in the user's
//! real `~/.hermes`, outside toolhost's home and shared by every toolhost home on the
//! machine. One directory serves all the plugins of a toolhost home, as one Hermes home
//! serves all the plugins of a Hermes profile (their files are named per plugin there
//! too). It holds the files Hermes' config helpers read: `config.yaml` (an empty
//! mapping: Hermes' defaults) and `.env` (empty), created when missing and never
//! overwritten. See docs/python-plugins.md.

use std::io::Write;
use std::path::{Path, PathBuf};

use tools_core::Home;

/// The variable Hermes reads its home from.
pub const HERMES_HOME_ENV: &str = "HERMES_HOME";

/// The files created in a new Hermes home, and their first contents.
const SKELETON: [(&str, &str); 2] = [
    (
        "config.yaml",
        "# Hermes home of toolhost's Python plugins (docs/python-plugins.md).\n{}\n",
    ),
    (".env", ""),
];

/// Why the Hermes home could not be prepared.
#[derive(Debug, thiserror::Error)]
#[error("cannot prepare the Hermes home {path} of Python plugins: {source}")]
pub struct HermesHomeError {
    /// The directory or file.
    pub path: PathBuf,
    /// Why.
    pub source: std::io::Error,
}

/// Where the Hermes home of `home`'s Python plugins is.
pub fn path(home: &Home) -> PathBuf {
    home.root().join("python-plugins").join("hermes-home")
}

/// The Hermes home of `home`'s Python plugins, created with its skeleton when missing.
pub fn prepare(home: &Home) -> Result<PathBuf, HermesHomeError> {
    let dir = path(home);
    create_skeleton(&dir)?;
    Ok(dir)
}

/// Create `dir` and the skeleton files it lacks (existing files are left alone).
fn create_skeleton(dir: &Path) -> Result<(), HermesHomeError> {
    let fail = |path: &Path| {
        let path = path.to_path_buf();
        move |source| HermesHomeError { path, source }
    };
    std::fs::create_dir_all(dir).map_err(fail(dir))?;
    for (name, text) in SKELETON {
        let file = dir.join(name);
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&file)
        {
            Ok(mut created) => created.write_all(text.as_bytes()).map_err(fail(&file))?,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(fail(&file)(e)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_skeleton_is_created_inside_the_home() {
        let root = tempfile::tempdir().unwrap();
        let home = Home::at(root.path().to_path_buf());
        let dir = prepare(&home).unwrap();
        assert!(dir.starts_with(root.path()), "{}", dir.display());
        assert!(dir.join("config.yaml").is_file());
        assert!(dir.join(".env").is_file());
    }

    #[test]
    fn existing_files_are_kept() {
        let root = tempfile::tempdir().unwrap();
        let home = Home::at(root.path().to_path_buf());
        let dir = path(&home);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.yaml"), "model: x\n").unwrap();
        prepare(&home).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join("config.yaml")).unwrap(),
            "model: x\n"
        );
    }
}
