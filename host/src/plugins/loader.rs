//! Loading a checked library: `dlopen` and abi_stable's checks, the logging bridge,
//! then the plugin's `register`.
//!
//! Each file is loaded with `lib_header_from_path(..).init_root_module()` — never
//! `RootModule::load_from_*`, which caches one module per type and would hand every
//! plugin the first one's module. Libraries are never unloaded. Within a process each
//! canonical path is loaded and registered once: loading the same file again would run
//! `register` again on the same instance, so a later request for the same path reuses
//! the first result (or its error).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use abi_stable::library::{LibraryError, RootModuleError, lib_header_from_path};
use abi_stable::std_types::RResult;
use toolhost_plugin_api::abi::{PluginModuleRef, PluginObjectBox};

use super::adapter::Declaration;
use super::logger::logger_for;
use super::manifest::{ApiMismatch, host_api_requirement};

/// Why a library could not be loaded or registered.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum LoadError {
    /// The dynamic loader refused the file.
    #[error("cannot load the library: {summary}")]
    Open {
        /// The loader's message, first line.
        summary: String,
        /// The loader's full message.
        detail: String,
    },
    /// A shared library without a toolhost root module.
    #[error("not a toolhost plugin (it exports no toolhost root module)")]
    NotAPlugin,
    /// Built against another plugin-api version.
    #[error(transparent)]
    Api(#[from] ApiMismatch),
    /// Built against a plugin-api whose types differ from this host's.
    #[error("incompatible plugin-api layout: {summary}")]
    Layout {
        /// The first difference found.
        summary: String,
        /// abi_stable's full report.
        detail: String,
    },
    /// Built with another abi_stable major version.
    #[error("built with an incompatible abi_stable ({0})")]
    AbiHeader(String),
    /// The library's root module constructor failed or panicked.
    #[error("the library's root module failed: {0}")]
    RootModule(String),
    /// `register` panicked (the panic was caught inside the plugin).
    #[error("register panicked: {0}")]
    RegisterPanicked(String),
    /// `register` returned an error.
    #[error("register failed: {0}")]
    RegisterFailed(String),
    /// `register` returned a declaration the host cannot read.
    #[error("invalid declaration: {0}")]
    Declaration(String),
    /// The same file is already loaded under another plugin name.
    #[error("the same library file is already loaded as plugin {0}")]
    AlreadyLoaded(String),
    /// The plugin host process could not be started or died while loading.
    #[error("{0}")]
    Process(String),
    /// The plugin host process reported a load error (one of the above, as text).
    #[error("{summary}")]
    InChild {
        /// The child's one-line error.
        summary: String,
        /// Its full report.
        detail: String,
    },
}

impl LoadError {
    /// The full story (abi_stable's report, the loader's message).
    pub fn detail(&self) -> String {
        match self {
            LoadError::Open { detail, .. } | LoadError::Layout { detail, .. } => {
                format!("{self}\n\n{detail}")
            }
            LoadError::InChild { detail, .. } => detail.clone(),
            _ => self.to_string(),
        }
    }
}

/// `Error:`/`Expected:`/`Found:` of abi_stable's layout report, on one line.
pub fn summarize_layout(report: &str) -> String {
    let lines: Vec<&str> = report.lines().map(str::trim).collect();
    let value_after = |start: usize, label: &str| {
        lines[start..]
            .iter()
            .position(|l| l.starts_with(label))
            .and_then(|i| {
                let at = start + i;
                let inline = lines[at][label.len()..].trim();
                if inline.is_empty() {
                    lines[at + 1..].iter().find(|l| !l.is_empty()).copied()
                } else {
                    Some(inline)
                }
            })
    };
    let Some(start) = lines.iter().position(|l| l.starts_with("Error:")) else {
        return lines
            .iter()
            .find(|l| !l.is_empty())
            .map_or_else(|| "layout mismatch".to_string(), |l| l.to_string());
    };
    let error = lines[start]["Error:".len()..].trim();
    match (
        value_after(start, "Expected:"),
        value_after(start, "Found:"),
    ) {
        (Some(expected), Some(found)) => format!("{error} (expected {expected}, found {found})"),
        _ => error.to_string(),
    }
}

fn map_library_error(err: LibraryError) -> LoadError {
    match err {
        LibraryError::OpenError { err, .. } => {
            let detail = err.to_string();
            LoadError::Open {
                summary: detail.lines().next().unwrap_or_default().to_string(),
                detail,
            }
        }
        LibraryError::GetSymbolError { .. } => LoadError::NotAPlugin,
        LibraryError::IncompatibleVersionNumber { actual_version, .. } => {
            LoadError::Api(ApiMismatch {
                expected: host_api_requirement(),
                found: actual_version.to_string(),
            })
        }
        LibraryError::ParseVersionError(e) => LoadError::Layout {
            summary: format!("unreadable plugin-api version ({e})"),
            detail: e.to_string(),
        },
        LibraryError::AbiInstability(report) => {
            let detail = report.to_string();
            LoadError::Layout {
                summary: summarize_layout(&detail),
                detail,
            }
        }
        LibraryError::InvalidAbiHeader(header) => LoadError::AbiHeader(format!(
            "abi_stable {}.{}, this host uses {}.{}",
            header.abi_major,
            header.abi_minor,
            abi_stable::library::AbiHeader::VALUE.abi_major,
            abi_stable::library::AbiHeader::VALUE.abi_minor
        )),
        LibraryError::InvalidCAbi { .. } => {
            LoadError::AbiHeader("the C ABI differs (another compiler?)".into())
        }
        LibraryError::RootModule { err, .. } => LoadError::RootModule(match err {
            RootModuleError::Unwound => "it panicked".into(),
            other => other.to_string().trim().to_string(),
        }),
        LibraryError::Many(errors) => errors.into_iter().next().map_or_else(
            || LoadError::RootModule("unknown error".into()),
            map_library_error,
        ),
    }
}

/// A registered plugin instance.
pub struct LoadedLibrary {
    /// The plugin name it was registered under.
    pub name: String,
    /// The object that runs its tools and hooks.
    pub object: Arc<PluginObjectBox>,
    /// What it declared.
    pub declaration: Declaration,
}

impl std::fmt::Debug for LoadedLibrary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedLibrary")
            .field("name", &self.name)
            .field("declaration", &self.declaration)
            .finish_non_exhaustive()
    }
}

type Outcome = Result<Arc<LoadedLibrary>, LoadError>;

static LOADED: Mutex<Option<HashMap<PathBuf, (String, Outcome)>>> = Mutex::new(None);

/// Load `canonical` as plugin `name` and register it with `host_info` (JSON).
pub fn load(canonical: &Path, name: &str, host_info: &str) -> Outcome {
    let mut loaded = LOADED.lock().unwrap_or_else(PoisonError::into_inner);
    let loaded = loaded.get_or_insert_with(HashMap::new);
    if let Some((first_name, outcome)) = loaded.get(canonical) {
        if first_name != name {
            return Err(LoadError::AlreadyLoaded(first_name.clone()));
        }
        return outcome.clone();
    }
    let outcome = load_uncached(canonical, name, host_info);
    loaded.insert(canonical.to_path_buf(), (name.to_string(), outcome.clone()));
    outcome
}

fn load_uncached(path: &Path, name: &str, host_info: &str) -> Outcome {
    let module = lib_header_from_path(path)
        .and_then(|header| header.init_root_module::<PluginModuleRef>())
        .map_err(map_library_error)?;
    (module.init())(logger_for(name));
    let instance = match (module.register())(host_info.into()) {
        RResult::ROk(instance) => instance,
        RResult::RErr(err) if err.is_panic() => {
            return Err(LoadError::RegisterPanicked(err.message.into_string()));
        }
        RResult::RErr(err) => return Err(LoadError::RegisterFailed(err.message.into_string())),
    };
    let declaration: Declaration = serde_json::from_str(instance.declaration.as_str())
        .map_err(|e| LoadError::Declaration(e.to_string()))?;
    Ok(Arc::new(LoadedLibrary {
        name: name.to_string(),
        object: Arc::new(instance.object),
        declaration,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_summary_takes_error_expected_found() {
        let report = "\nCompared <this>:\n\tfoo\nTo <other>:\n\tbar\n\
                      Error:mismatched type\nExpected:\n    RString\nFound:\n    RVec\n\
                      Error:other\nExpected:\n  a\nFound:\n  b\n";
        assert_eq!(
            summarize_layout(report),
            "mismatched type (expected RString, found RVec)"
        );
        assert_eq!(summarize_layout("\n\nsomething odd\n"), "something odd");
    }
}
