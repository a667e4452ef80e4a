//! `toolhost plugins new NAME`: a plugin crate that builds and loads as it is.
//!
//! The crate depends on `toolhost-plugin-api` by path — the SDK sources this `toolhost`
//! was built from — so it builds on a machine where the SDK is not on crates.io, and it
//! matches the host's ABI exactly. Override with `--api-path DIR`, with
//! `TOOLHOST_PLUGIN_API_PATH`, or `--api-version 0.1` for the crates.io package. When the
//! SDK's workspace has a `Cargo.lock`, it is copied so the new crate resolves the same
//! dependency versions (and can reuse an existing build via `CARGO_TARGET_DIR`).

use std::path::{Path, PathBuf};

use super::manifest::{host_api_requirement, validate_plugin_name};

/// Env: the plugin-api sources new plugins depend on.
pub const API_PATH_ENV: &str = "TOOLHOST_PLUGIN_API_PATH";

/// Where a new plugin gets `toolhost-plugin-api` from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApiSource {
    /// A path dependency on these sources.
    Path(PathBuf),
    /// A crates.io version requirement.
    Version(String),
}

impl ApiSource {
    /// `TOOLHOST_PLUGIN_API_PATH`, else the sources this binary was built from when they
    /// still exist, else the crates.io version matching this host.
    pub fn default_for_host() -> Self {
        if let Some(dir) = std::env::var_os(API_PATH_ENV).filter(|d| !d.is_empty()) {
            return ApiSource::Path(PathBuf::from(dir));
        }
        let built_from = Path::new(toolhost_plugin_api::__private::SOURCE_DIR);
        if built_from.join("Cargo.toml").is_file() {
            return ApiSource::Path(built_from.to_path_buf());
        }
        ApiSource::Version(host_api_requirement().trim_start_matches('^').to_string())
    }
}

/// Why the crate could not be created.
#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    /// The name cannot be a plugin or crate name.
    #[error("invalid plugin name {name:?}: {reason}")]
    InvalidName {
        /// The name given.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// The target directory exists and is not empty.
    #[error("{0} already exists and is not empty")]
    Exists(PathBuf),
    /// Writing failed.
    #[error("cannot write {path}: {source}", path = .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

fn write(path: &Path, text: &str) -> Result<(), ScaffoldError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|source| ScaffoldError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    std::fs::write(path, text).map_err(|source| ScaffoldError::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn toml_string(text: &str) -> String {
    toml_edit::Value::from(text).to_string().trim().to_string()
}

/// Create the crate for plugin `name` in `parent/name`; returns its directory.
pub fn create(name: &str, parent: &Path, api: &ApiSource) -> Result<PathBuf, ScaffoldError> {
    let invalid = |reason: &str| ScaffoldError::InvalidName {
        name: name.to_string(),
        reason: reason.to_string(),
    };
    validate_plugin_name(name).map_err(|r| invalid(&r))?;
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Err(invalid(
            "must start with a letter (it is also the crate name)",
        ));
    }
    if name.len() > 58 {
        return Err(invalid(
            "must be at most 58 characters (tool names get a suffix)",
        ));
    }
    let lib = name.replace('-', "_");
    let dir = parent.join(name);
    if dir
        .read_dir()
        .is_ok_and(|mut entries| entries.next().is_some())
    {
        return Err(ScaffoldError::Exists(dir));
    }

    let dependency = match api {
        ApiSource::Path(path) => {
            let shown = path.to_string_lossy();
            format!(
                "# The SDK, from the sources this toolhost was built from. To use crates.io\n\
                 # instead: toolhost-plugin-api = \"{}\"\n\
                 toolhost-plugin-api = {{ path = {} }}",
                host_api_requirement().trim_start_matches('^'),
                toml_string(&shown)
            )
        }
        ApiSource::Version(version) => {
            format!("toolhost-plugin-api = {}", toml_string(version))
        }
    };
    write(
        &dir.join("Cargo.toml"),
        &format!(
            "[package]\n\
             name = {crate_name}\n\
             version = \"0.1.0\"\n\
             edition = \"2024\"\n\
             publish = false\n\
             \n\
             [lib]\n\
             crate-type = [\"cdylib\"]\n\
             \n\
             [dependencies]\n\
             {dependency}\n\
             \n\
             # A plugin is its own workspace, even when created inside another one.\n\
             [workspace]\n\
             \n\
             [profile.release]\n\
             # Never \"abort\": toolhost turns plugin panics into errors, which needs unwinding.\n\
             panic = \"unwind\"\n",
            crate_name = toml_string(name),
        ),
    )?;
    write(
        &dir.join("plugin.toml"),
        &format!(
            "name = {}\n\
             version = \"0.1.0\"\n\
             description = \"A toolhost plugin\"\n\
             # The library's file name without prefix or extension (lib{lib}.so, {lib}.dll).\n\
             library = {}\n\
             # The toolhost-plugin-api versions this plugin works with.\n\
             api = {}\n\
             # Core tools this plugin may replace:\n\
             # override = []\n",
            toml_string(name),
            toml_string(&lib),
            toml_string(&host_api_requirement()),
        ),
    )?;
    let source = toolhost_plugin_api::__private::TEMPLATE_LIB_RS
        .replace(
            "[plugins.config.my_plugin]",
            &format!("[plugins.config.{name}]"),
        )
        .replace("my_plugin", &lib);
    write(&dir.join("src/lib.rs"), &source)?;
    write(&dir.join(".gitignore"), "/target\n")?;
    write(
        &dir.join("README.md"),
        &format!(
            "# {name}\n\nA toolhost plugin.\n\n```sh\n\
             toolhost plugins install .          # builds with cargo --release, installs\n\
             toolhost call {lib}_greet '{{\"name\":\"Ada\"}}'\n```\n"
        ),
    )?;
    if let ApiSource::Path(path) = api
        && let Some(lock) = path.parent().map(|ws| ws.join("Cargo.lock"))
        && lock.is_file()
    {
        // Best effort: the same versions as the host's workspace.
        let _ = std::fs::copy(&lock, dir.join("Cargo.lock"));
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_a_crate_with_the_name_substituted() {
        let parent = tempfile::tempdir().unwrap();
        let api = ApiSource::Path(PathBuf::from("/src/plugin-api"));
        let dir = create("weather-tools", parent.path(), &api).unwrap();
        let lib = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap();
        assert!(lib.contains("\"weather_tools_greet\""), "{lib}");
        assert!(lib.contains("[plugins.config.weather-tools]"), "{lib}");
        assert!(!lib.contains("my_plugin"));
        let manifest = std::fs::read_to_string(dir.join("plugin.toml")).unwrap();
        let parsed = super::super::manifest::Manifest::parse(&manifest, false).unwrap();
        assert_eq!(parsed.name, "weather-tools");
        assert_eq!(parsed.library.as_deref(), Some("weather_tools"));
        let cargo = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        assert!(cargo.contains("path = \"/src/plugin-api\""), "{cargo}");
        assert!(cargo.parse::<toml_edit::DocumentMut>().is_ok());
    }

    #[test]
    fn refuses_bad_names_and_existing_directories() {
        let parent = tempfile::tempdir().unwrap();
        let api = ApiSource::Version("0.1".into());
        for bad in ["", "9lives", "a b", "../x", "-x"] {
            assert!(
                matches!(
                    create(bad, parent.path(), &api),
                    Err(ScaffoldError::InvalidName { .. })
                ),
                "{bad:?}"
            );
        }
        create("ok", parent.path(), &api).unwrap();
        assert!(matches!(
            create("ok", parent.path(), &api),
            Err(ScaffoldError::Exists(_))
        ));
    }
}
