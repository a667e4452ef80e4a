//! `toolhost plugins install PATH`: put a plugin into a plugin directory, atomically.
//!
//! `PATH` may be a crate directory (built with `cargo build --release`, or the dev
//! profile with `--debug`), a directory holding `plugin.toml` and its built library, or
//! a library file (with a `plugin.toml` beside it, or the manifest embedded by
//! `export_plugin!`). The library and manifest are checked as the loader would check
//! them, staged in a hidden directory next to the destination, flushed to disk, and
//! renamed into place; a plugin of the same name is replaced the same way. A running
//! host never sees a half-written library: files are never rewritten in place, and the
//! old library stays valid for any process that still has it mapped.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use toolhost_plugin_api::embed;

use super::elf;
use super::manifest::{Manifest, check_api, library_file_name};

/// Why an install failed (nothing was changed).
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// The path is not a crate, plugin directory or library.
    #[error("{0}")]
    Source(String),
    /// `cargo build` failed or produced no library.
    #[error("build failed: {0}")]
    Build(String),
    /// The plugin would not load.
    #[error("{path}: {reason}", path = .path.display())]
    Invalid {
        /// The library or manifest.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A manifest that is not a regular file, too large or unreadable.
    #[error(transparent)]
    Read(#[from] tools_core::bounded_read::BoundedReadError),
    /// Copying or renaming failed.
    #[error("cannot install into {path}: {source}", path = .path.display())]
    Io {
        /// Where.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

/// How to install.
#[derive(Clone, Debug)]
pub struct InstallOptions {
    /// The crate directory, plugin directory or library.
    pub source: PathBuf,
    /// The plugin root to install into (`<home>/plugins` by default).
    pub destination: PathBuf,
    /// Build crates in release mode (default) rather than the dev profile.
    pub release: bool,
}

/// What was installed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Installed {
    /// Plugin name.
    pub name: String,
    /// Plugin version.
    pub version: String,
    /// Its new directory.
    pub dir: PathBuf,
    /// A plugin of that name was replaced.
    pub replaced: bool,
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> InstallError + '_ {
    move |source| InstallError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Install as described in the module docs.
pub fn install(options: &InstallOptions) -> Result<Installed, InstallError> {
    let source = &options.source;
    let (manifest_text, library) = if source.join("Cargo.toml").is_file() {
        let library = build_crate(source, options.release)?;
        let manifest = source.join("plugin.toml");
        let text = if manifest.is_file() {
            read(&manifest)?
        } else {
            embedded_manifest(&library)?
        };
        (text, library)
    } else if source.join("plugin.toml").is_file() {
        let text = read(&source.join("plugin.toml"))?;
        let manifest = parse(&text, &source.join("plugin.toml"), false)?;
        let library = manifest
            .library_path(source)
            .ok_or_else(|| InstallError::Source("plugin.toml names no library".into()))?;
        (text, library)
    } else if source.is_file() {
        let beside = source.parent().map(|d| d.join("plugin.toml"));
        let text = match beside.filter(|m| m.is_file()) {
            Some(manifest) => read(&manifest)?,
            None => embedded_manifest(source)?,
        };
        (text, source.clone())
    } else {
        return Err(InstallError::Source(format!(
            "{} is not a crate directory, a plugin directory or a library",
            source.display()
        )));
    };
    place(&manifest_text, &library, &options.destination)
}

fn read(path: &Path) -> Result<String, InstallError> {
    use tools_core::bounded_read;
    Ok(bounded_read::read_to_string(
        path,
        bounded_read::MANIFEST_LIMIT,
    )?)
}

fn parse(text: &str, path: &Path, embedded: bool) -> Result<Manifest, InstallError> {
    Manifest::parse(text, embedded).map_err(|e| InstallError::Invalid {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}

fn embedded_manifest(library: &Path) -> Result<String, InstallError> {
    let invalid = |reason: String| InstallError::Invalid {
        path: library.to_path_buf(),
        reason,
    };
    let info = elf::check(library).map_err(|e| invalid(e.to_string()))?;
    let bytes = info.embedded.ok_or_else(|| {
        invalid("no plugin.toml beside it and no embedded manifest: not a toolhost plugin".into())
    })?;
    Ok(embed::decode(&bytes)
        .map_err(|e| invalid(e.to_string()))?
        .manifest)
}

/// `cargo build` the crate in `dir`; the path of the cdylib it produced.
// `cargo build` of a plugin the user installs, run by the user's command.
#[allow(clippy::disallowed_methods)]
fn build_crate(dir: &Path, release: bool) -> Result<PathBuf, InstallError> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .arg("build")
        .arg("--lib")
        .arg("--message-format=json-render-diagnostics")
        .arg("--manifest-path")
        .arg(dir.join("Cargo.toml"));
    if release {
        command.arg("--release");
    }
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| InstallError::Build(format!("cannot run cargo: {e}")))?;
    let manifest_path = dir.join("Cargo.toml").canonicalize().map_err(io_err(dir))?;
    let mut libraries = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let Ok(message) = serde_json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            if message["reason"] != "compiler-artifact"
                || message["manifest_path"]
                    .as_str()
                    .map(PathBuf::from)
                    .as_ref()
                    != Some(&manifest_path)
            {
                continue;
            }
            let cdylib = message["target"]["crate_types"]
                .as_array()
                .is_some_and(|kinds| kinds.iter().any(|k| k == "cdylib"));
            if !cdylib {
                continue;
            }
            libraries.extend(
                message["filenames"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|f| f.as_str())
                    .filter(|f| f.ends_with(std::env::consts::DLL_SUFFIX))
                    .map(PathBuf::from),
            );
        }
    }
    let status = child
        .wait()
        .map_err(|e| InstallError::Build(format!("cargo did not finish: {e}")))?;
    if !status.success() {
        return Err(InstallError::Build(format!(
            "cargo build exited with {status}"
        )));
    }
    match libraries.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(InstallError::Build(
            "the crate produced no cdylib (set crate-type = [\"cdylib\"] in [lib])".into(),
        )),
        _ => Err(InstallError::Build(format!(
            "the crate produced several libraries: {libraries:?}"
        ))),
    }
}

/// Check `library` with `manifest_text` and move both into `root/<name>/` atomically.
fn place(manifest_text: &str, library: &Path, root: &Path) -> Result<Installed, InstallError> {
    let info = elf::check(library).map_err(|e| InstallError::Invalid {
        path: library.to_path_buf(),
        reason: e.to_string(),
    })?;
    let built_for = info
        .embedded
        .as_deref()
        .and_then(|bytes| embed::decode(bytes).ok())
        .map(|e| e.api_version);
    let manifest = parse(manifest_text, library, true)?;
    check_api(&manifest, built_for.as_deref()).map_err(|e| InstallError::Invalid {
        path: library.to_path_buf(),
        reason: e.to_string(),
    })?;
    let file_name = library
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .ok_or_else(|| InstallError::Source(format!("{} has no file name", library.display())))?;
    // The installed manifest must name the copied file.
    let mut doc: toml_edit::DocumentMut =
        manifest_text.parse().map_err(|e| InstallError::Invalid {
            path: library.to_path_buf(),
            reason: format!("plugin.toml: {e}"),
        })?;
    let names_file = manifest
        .library
        .as_deref()
        .is_some_and(|lib| library_file_name(lib) == file_name);
    if !names_file {
        doc["library"] = toml_edit::value(file_name.clone());
    }

    std::fs::create_dir_all(root).map_err(io_err(root))?;
    let staging = tempfile::Builder::new()
        .prefix(".install-")
        .tempdir_in(root)
        .map_err(io_err(root))?;
    let staged_lib = staging.path().join(&file_name);
    std::fs::copy(library, &staged_lib).map_err(io_err(&staged_lib))?;
    let staged_manifest = staging.path().join("plugin.toml");
    std::fs::write(&staged_manifest, doc.to_string()).map_err(io_err(&staged_manifest))?;
    for file in [&staged_lib, &staged_manifest] {
        File::open(file)
            .and_then(|f| f.sync_all())
            .map_err(io_err(file))?;
    }
    let target = root.join(&manifest.name);
    let replaced = target.exists();
    let old = root.join(format!(
        ".replaced-{}-{}",
        manifest.name,
        std::process::id()
    ));
    if replaced {
        std::fs::rename(&target, &old).map_err(io_err(&target))?;
    }
    let staged = staging.keep();
    if let Err(source) = std::fs::rename(&staged, &target) {
        if replaced {
            let _ = std::fs::rename(&old, &target);
        }
        let _ = std::fs::remove_dir_all(&staged);
        return Err(InstallError::Io {
            path: target,
            source,
        });
    }
    if replaced {
        let _ = std::fs::remove_dir_all(&old);
    }
    if let Ok(dir) = File::open(root) {
        let _ = dir.sync_all();
    }
    Ok(Installed {
        name: manifest.name,
        version: manifest.version.to_string(),
        dir: target,
        replaced,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_is_not_a_plugin_and_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("plugins");
        let text = dir.path().join("libfake.so");
        std::fs::write(&text, "not a library").unwrap();
        let err = install(&InstallOptions {
            source: text,
            destination: dest.clone(),
            release: true,
        })
        .unwrap_err();
        assert!(err.to_string().contains("no ELF header"), "{err}");
        assert!(!dest.exists());
        let err = install(&InstallOptions {
            source: dir.path().join("nope"),
            destination: dest,
            release: true,
        })
        .unwrap_err();
        assert!(matches!(err, InstallError::Source(_)));
    }
}
