//! Where plugins are found, and what is learned about them without loading them.
//!
//! Four sources, scanned in this order; a later source wins on a name collision:
//! 1. **bundled** — libraries built with toolhost, next to the `toolhost` binary. A plain
//!    `cargo build` puts every workspace cdylib in `target/<profile>/`; the ones named
//!    `libtoolhost_plugin_*.so` are bundled plugins and carry their `plugin.toml` inside
//!    (embedded by `export_plugin!`). Packaged installs may also use
//!    `<binary dir>/plugins/<name>/plugin.toml`. `TOOLHOST_BUNDLED_PLUGINS=DIR` replaces
//!    the binary's directory (empty: no bundled plugins).
//! 2. **user** — `<toolhost home>/plugins/`.
//! 3. **project** — `./.toolhost/plugins/`, only when opted in
//!    (`TOOLHOST_ENABLE_PROJECT_PLUGINS=1` or `plugins.project = true`): a cloned
//!    repository must not run code by being opened. When not opted in, its plugins are
//!    listed as disabled and never loaded.
//! 4. **installed** — the directories of `TOOLHOST_PLUGIN_PATH` (earlier entries take
//!    precedence, as in `PATH`), then `plugins.paths`, then `/usr/local/lib/toolhost/plugins`
//!    and `/usr/lib/toolhost/plugins`.
//!
//! In every directory, a plugin is a subdirectory with a `plugin.toml` naming its
//! library, or a library file that carries its own manifest. Hidden entries are skipped
//! (installs are staged in hidden directories).

use std::path::{Path, PathBuf};

use serde::Serialize;
use tools_core::{Home, bounded_read};

use super::config::PluginsSettings;
use super::elf;
use super::manifest::{Manifest, check_api};
use super::python::manifest::{manifest_file as python_manifest_file, parse as parse_yaml};
use super::python::shim::Target;

/// Env: opt in to project plugins.
pub const PROJECT_ENV: &str = "TOOLHOST_ENABLE_PROJECT_PLUGINS";
/// Env: extra installed-plugin directories (`:`-separated).
pub const PATH_ENV: &str = "TOOLHOST_PLUGIN_PATH";
/// Env: where bundled plugins are (instead of the binary's directory).
pub const BUNDLED_ENV: &str = "TOOLHOST_BUNDLED_PLUGINS";
/// System directories of installed plugins, lowest precedence first.
pub const SYSTEM_DIRS: [&str; 2] = [
    "/usr/lib/toolhost/plugins",
    "/usr/local/lib/toolhost/plugins",
];
/// The project plugin directory, relative to the working directory.
pub const PROJECT_DIR: &str = ".toolhost/plugins";
/// File-name prefix (after the platform's `lib`) of bundled plugin libraries.
pub const BUNDLED_PREFIX: &str = "toolhost_plugin_";

/// Where a plugin came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PluginSource {
    /// Built with toolhost.
    Bundled,
    /// `<home>/plugins`.
    User,
    /// `./.toolhost/plugins`.
    Project,
    /// `TOOLHOST_PLUGIN_PATH` and system directories.
    Installed,
    /// A `hermes_agent.plugins` entry point of the Python environment.
    Pip,
}

impl std::fmt::Display for PluginSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(match self {
            PluginSource::Bundled => "bundled",
            PluginSource::User => "user",
            PluginSource::Project => "project",
            PluginSource::Installed => "installed",
            PluginSource::Pip => "pip",
        })
    }
}

/// The directories to scan.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Roots {
    /// Bundled-plugin directories.
    pub bundled: Vec<PathBuf>,
    /// The user plugin directory.
    pub user: Option<PathBuf>,
    /// The project plugin directory, when opted in.
    pub project: Option<PathBuf>,
    /// The project plugin directory when it exists but is not opted in.
    pub project_off: Option<PathBuf>,
    /// Installed-plugin directories, lowest precedence first.
    pub installed: Vec<PathBuf>,
}

fn env_truthy(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| matches!(v.trim(), "1" | "true" | "yes" | "on"))
}

impl Roots {
    /// The roots for this process: its binary, `home`, working directory, environment
    /// and `config`.
    pub fn from_process(home: &Home, config: &PluginsSettings) -> Self {
        let bundled = if !config.bundled {
            Vec::new()
        } else {
            match std::env::var_os(BUNDLED_ENV) {
                Some(dir) if dir.is_empty() => Vec::new(),
                Some(dir) => vec![PathBuf::from(dir)],
                None => std::env::current_exe()
                    .ok()
                    .and_then(|exe| exe.parent().map(Path::to_path_buf))
                    .into_iter()
                    .collect(),
            }
        };
        let project_dir = std::env::current_dir()
            .ok()
            .map(|cwd| cwd.join(PROJECT_DIR))
            .filter(|dir| dir.is_dir());
        let opted_in = config.project || env_truthy(PROJECT_ENV);
        let mut installed: Vec<PathBuf> = SYSTEM_DIRS.iter().map(PathBuf::from).collect();
        installed.extend(config.resolved_paths(home.root()).into_iter().rev());
        if let Some(paths) = std::env::var_os(PATH_ENV) {
            let mut dirs: Vec<PathBuf> = std::env::split_paths(&paths)
                .filter(|p| !p.as_os_str().is_empty())
                .collect();
            dirs.reverse();
            installed.extend(dirs);
        }
        Roots {
            bundled,
            user: Some(home.plugins_dir()),
            project: project_dir.clone().filter(|_| opted_in),
            project_off: project_dir.filter(|_| !opted_in),
            installed,
        }
    }

    /// Every directory with its source, in scan order (for `plugins doctor`).
    pub fn directories(&self) -> Vec<(PluginSource, PathBuf)> {
        let mut out = Vec::new();
        for dir in &self.bundled {
            out.push((PluginSource::Bundled, dir.clone()));
            out.push((PluginSource::Bundled, dir.join("plugins")));
        }
        out.extend(self.user.iter().map(|d| (PluginSource::User, d.clone())));
        out.extend(
            self.project
                .iter()
                .map(|d| (PluginSource::Project, d.clone())),
        );
        out.extend(
            self.installed
                .iter()
                .map(|d| (PluginSource::Installed, d.clone())),
        );
        out
    }
}

/// What is on disk: a plugin directory or a self-describing library file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// `<root>/<name>/` (expected to hold `plugin.toml`).
    Dir(PathBuf),
    /// A library carrying its own manifest.
    Loose(PathBuf),
    /// A Hermes directory plugin: `plugin.yaml` and `__init__.py`, no `plugin.toml`.
    Python(PathBuf),
}

/// What kind of code a plugin is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PluginKind {
    /// A shared library built against the plugin API.
    #[default]
    Native,
    /// A Hermes Agent Python plugin, run by the Python plugin host.
    Python,
}

impl std::fmt::Display for PluginKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(match self {
            PluginKind::Native => "native",
            PluginKind::Python => "python",
        })
    }
}

fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut entries: Vec<PathBuf> = read
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| !n.starts_with('.'))
        })
        .collect();
    entries.sort();
    entries
}

fn is_library(path: &Path, bundled_only: bool) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let prefix = if bundled_only {
        format!("{}{BUNDLED_PREFIX}", std::env::consts::DLL_PREFIX)
    } else {
        String::new()
    };
    name.starts_with(&prefix) && name.ends_with(std::env::consts::DLL_SUFFIX) && path.is_file()
}

/// The plugins in one directory, in name order.
pub fn scan_dir(dir: &Path, bundled_only: bool) -> Vec<Location> {
    let mut found = Vec::new();
    for path in sorted_entries(dir) {
        if path.is_dir() {
            if bundled_only {
                continue;
            }
            if !path.join("plugin.toml").exists() && python_manifest_file(&path).is_some() {
                found.push(Location::Python(path));
            } else {
                found.push(Location::Dir(path));
            }
        } else if is_library(&path, bundled_only) {
            found.push(Location::Loose(path));
        }
    }
    if bundled_only {
        found.extend(
            sorted_entries(&dir.join("plugins"))
                .into_iter()
                .filter(|p| p.is_dir())
                .map(Location::Dir),
        );
    }
    found
}

/// Everything in `roots`, lowest precedence first; the flag marks project plugins that
/// are not opted in.
pub fn scan(roots: &Roots) -> Vec<(PluginSource, Location, bool)> {
    let mut out = Vec::new();
    for dir in &roots.bundled {
        out.extend(
            scan_dir(dir, true)
                .into_iter()
                .map(|l| (PluginSource::Bundled, l, false)),
        );
    }
    let plain = |source, dir: &PathBuf, off| {
        scan_dir(dir, false)
            .into_iter()
            .map(move |l| (source, l, off))
    };
    if let Some(dir) = &roots.user {
        out.extend(plain(PluginSource::User, dir, false));
    }
    if let Some(dir) = &roots.project_off {
        out.extend(plain(PluginSource::Project, dir, true));
    }
    if let Some(dir) = &roots.project {
        out.extend(plain(PluginSource::Project, dir, false));
    }
    for dir in &roots.installed {
        out.extend(plain(PluginSource::Installed, dir, false));
    }
    out
}

/// A failure before loading: a one-line summary and the full story.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// One line naming the cause.
    pub summary: String,
    /// Everything known (for `plugins doctor`).
    pub detail: String,
}

impl Failure {
    pub(crate) fn new(summary: impl Into<String>) -> Self {
        let summary = summary.into();
        Failure {
            detail: summary.clone(),
            summary,
        }
    }
}

/// A plugin found and checked, but not loaded.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// Where it came from.
    pub source: PluginSource,
    /// The manifest's name, else the directory or file name.
    pub name: String,
    /// `plugin.toml`, when the plugin is a directory.
    pub manifest_path: Option<PathBuf>,
    /// The library file (the directory when unknown).
    pub library: PathBuf,
    /// The parsed manifest.
    pub manifest: Option<Manifest>,
    /// The plugin-api version the library was built against (embedded record).
    pub built_for: Option<String>,
    /// Why it cannot load, if it cannot.
    pub failure: Option<Failure>,
    /// A project plugin that is not opted in.
    pub project_off: bool,
    /// Native library or Python plugin.
    pub kind: PluginKind,
    /// What the Python plugin host imports (Python plugins only).
    pub python: Option<Target>,
    /// Things worth a warning found while inspecting.
    pub warnings: Vec<String>,
}

fn file_stem(path: &Path) -> String {
    let stem = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = stem
        .strip_suffix(std::env::consts::DLL_SUFFIX)
        .unwrap_or(&stem);
    stem.strip_prefix(std::env::consts::DLL_PREFIX)
        .unwrap_or(stem)
        .to_string()
}

/// Read and check what can be checked without loading: manifest, library file (ELF
/// header, segment bounds, embedded record) and plugin-api compatibility.
pub fn inspect(source: PluginSource, location: &Location, project_off: bool) -> Candidate {
    let mut candidate = match location {
        Location::Python(dir) => return inspect_python(source, dir, project_off),
        Location::Dir(dir) => Candidate {
            source,
            name: dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            manifest_path: Some(dir.join("plugin.toml")),
            library: dir.clone(),
            manifest: None,
            built_for: None,
            failure: None,
            project_off,
            kind: PluginKind::Native,
            python: None,
            warnings: Vec::new(),
        },
        Location::Loose(file) => Candidate {
            source,
            name: file_stem(file),
            manifest_path: None,
            library: file.clone(),
            manifest: None,
            built_for: None,
            failure: None,
            project_off,
            kind: PluginKind::Native,
            python: None,
            warnings: Vec::new(),
        },
    };
    if let Err(failure) = inspect_into(&mut candidate, location) {
        candidate.failure = Some(failure);
    }
    candidate
}

/// A Hermes directory plugin: its `plugin.yaml` read, nothing imported.
fn inspect_python(source: PluginSource, dir: &Path, project_off: bool) -> Candidate {
    let dir_name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let manifest_path = python_manifest_file(dir);
    let mut candidate = Candidate {
        source,
        name: dir_name.clone(),
        manifest_path: manifest_path.clone(),
        library: dir.to_path_buf(),
        manifest: None,
        built_for: None,
        failure: None,
        project_off,
        kind: PluginKind::Python,
        python: Some(Target::Directory(dir.to_path_buf())),
        warnings: Vec::new(),
    };
    let Some(path) = manifest_path else {
        candidate.failure = Some(Failure::new("missing plugin.yaml"));
        return candidate;
    };
    let file = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let parsed = bounded_read::read_to_string(&path, bounded_read::MANIFEST_LIMIT)
        .map_err(|e| Failure::new(e.to_string()))
        .and_then(|text| {
            parse_yaml(&file, &text, &dir_name).map_err(|e| Failure::new(e.to_string()))
        });
    match parsed {
        Ok((manifest, warnings)) => {
            candidate.name = manifest.name.clone();
            candidate.manifest = Some(manifest);
            candidate.warnings = warnings;
            if !dir.join("__init__.py").is_file() {
                candidate.failure =
                    Some(Failure::new(format!("no __init__.py in {}", dir.display())));
            }
        }
        Err(failure) => candidate.failure = Some(failure),
    }
    candidate
}

fn inspect_into(candidate: &mut Candidate, location: &Location) -> Result<(), Failure> {
    let embedded_text = match location {
        Location::Dir(dir) => {
            let path = dir.join("plugin.toml");
            let text = match bounded_read::read_to_string(&path, bounded_read::MANIFEST_LIMIT) {
                Ok(text) => text,
                Err(e) if e.is_not_found() => {
                    return Err(Failure::new("missing plugin.toml"));
                }
                Err(e) => return Err(Failure::new(e.to_string())),
            };
            let manifest =
                Manifest::parse(&text, false).map_err(|e| Failure::new(e.to_string()))?;
            candidate.name = manifest.name.clone();
            if let Some(library) = manifest.library_path(dir) {
                candidate.library = library;
            }
            candidate.manifest = Some(manifest);
            None
        }
        Location::Loose(_) | Location::Python(_) => Some(()),
    };
    if candidate.manifest.is_some() && !candidate.library.is_file() {
        return Err(Failure::new(format!(
            "library {} not found",
            candidate.library.display()
        )));
    }
    let info = elf::check(&candidate.library).map_err(|e| Failure::new(e.to_string()))?;
    let embedded = match info
        .embedded
        .as_deref()
        .map(toolhost_plugin_api::embed::decode)
    {
        Some(Ok(embedded)) => Some(embedded),
        Some(Err(e)) => return Err(Failure::new(format!("not a toolhost plugin ({e})"))),
        None => None,
    };
    if embedded_text.is_some() {
        let Some(embedded) = &embedded else {
            return Err(Failure {
                summary: "not a toolhost plugin (no embedded manifest)".into(),
                detail: "not a toolhost plugin: a library on its own must carry the manifest \
                         that export_plugin! embeds; otherwise put it in a directory with a \
                         plugin.toml"
                    .into(),
            });
        };
        let manifest = Manifest::parse(&embedded.manifest, true)
            .map_err(|e| Failure::new(format!("embedded {e}")))?;
        candidate.name = manifest.name.clone();
        candidate.manifest = Some(manifest);
    }
    candidate.built_for = embedded.map(|e| e.api_version);
    if let Some(manifest) = &candidate.manifest {
        check_api(manifest, candidate.built_for.as_deref())
            .map_err(|e| Failure::new(e.to_string()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_finds_dirs_and_libraries_and_skips_hidden() {
        let root = tempfile::tempdir().unwrap();
        let lib = format!(
            "{}x{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        );
        std::fs::create_dir(root.path().join("b")).unwrap();
        std::fs::create_dir(root.path().join(".tmp-install")).unwrap();
        std::fs::write(root.path().join(&lib), "").unwrap();
        std::fs::write(root.path().join("notes.txt"), "").unwrap();
        let found = scan_dir(root.path(), false);
        assert_eq!(
            found,
            vec![
                Location::Dir(root.path().join("b")),
                Location::Loose(root.path().join(&lib)),
            ]
        );
        // Next to the binary only libtoolhost_plugin_* count.
        assert!(scan_dir(root.path(), true).is_empty());
    }

    #[test]
    fn missing_and_malformed_manifests_fail_with_the_directory_name() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("broken");
        std::fs::create_dir(&dir).unwrap();
        let c = inspect(PluginSource::User, &Location::Dir(dir.clone()), false);
        assert_eq!(c.name, "broken");
        assert_eq!(c.failure.unwrap().summary, "missing plugin.toml");
        std::fs::write(dir.join("plugin.toml"), "name = \n").unwrap();
        let c = inspect(PluginSource::User, &Location::Dir(dir), false);
        assert!(
            c.failure
                .unwrap()
                .summary
                .starts_with("malformed plugin.toml: line 1")
        );
    }

    #[test]
    fn a_text_file_named_like_a_library_is_not_elf() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("t");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(
            dir.join("plugin.toml"),
            "name = \"t\"\nversion = \"1.0.0\"\nlibrary = \"t\"\napi = \"^0.1\"\n",
        )
        .unwrap();
        std::fs::write(
            dir.join(super::super::manifest::library_file_name("t")),
            "text",
        )
        .unwrap();
        let c = inspect(PluginSource::User, &Location::Dir(dir), false);
        assert_eq!(c.name, "t");
        assert_eq!(
            c.failure.unwrap().summary,
            "not a shared library (no ELF header)"
        );
    }
}
