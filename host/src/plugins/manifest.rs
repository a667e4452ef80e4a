//! `plugin.toml`: parsing, validation, and the plugin-api compatibility check.
//!
//! A manifest comes from a plugin directory (`<root>/<name>/plugin.toml`) or from the
//! copy a library carries inside itself (see `toolhost_plugin_api::embed`). Keys: `name`,
//! `version`, `description`, `library` (file name relative to the manifest; without an
//! extension the platform's prefix and suffix are added), `api` (semver requirement on
//! toolhost-plugin-api), optional `override` (core tool names the plugin may replace),
//! `enabled_by_default` and `isolation` (`"process"` to run in a child process). Unknown
//! keys are kept as warnings, not errors, so newer manifests still load.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use semver::{Op, Version, VersionReq};
use serde::Deserialize;

use super::process::Isolation;

/// A valid manifest.
#[derive(Clone, Debug, PartialEq)]
pub struct Manifest {
    /// Unique plugin name.
    pub name: String,
    /// The plugin's own version.
    pub version: Version,
    /// One-line description.
    pub description: String,
    /// The library file, relative to the manifest (absent in embedded manifests, which
    /// live in the library itself).
    pub library: Option<String>,
    /// The plugin-api versions the plugin works with.
    pub api: VersionReq,
    /// Core tools the plugin may replace.
    pub overrides: Vec<String>,
    /// Loaded without being listed in `plugins.enabled`.
    pub enabled_by_default: bool,
    /// Where the plugin asks to run (`isolation = "process"`); config may override.
    pub isolation: Option<Isolation>,
    /// Keys this host does not know.
    pub unknown_keys: Vec<String>,
}

/// Why a manifest is unusable. Messages are one line and name the field.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum ManifestError {
    /// Not TOML, or a value of the wrong type.
    #[error("malformed plugin.toml: line {line}, column {column}: {message}")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A required key is absent.
    #[error("plugin.toml: missing `{0}`")]
    Missing(&'static str),
    /// A key has an unusable value.
    #[error("plugin.toml: `{field}` {reason}")]
    Invalid {
        /// The key.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
}

#[derive(Deserialize)]
struct RawManifest {
    name: Option<String>,
    version: Option<String>,
    description: Option<String>,
    library: Option<String>,
    api: Option<String>,
    #[serde(rename = "override")]
    overrides: Option<Vec<String>>,
    enabled_by_default: Option<bool>,
    isolation: Option<String>,
    #[serde(flatten)]
    extra: BTreeMap<String, toml::Value>,
}

fn invalid(field: &'static str, reason: impl Into<String>) -> ManifestError {
    ManifestError::Invalid {
        field,
        reason: reason.into(),
    }
}

/// Plugin names: 1–64 of `[A-Za-z0-9_-]`, starting with a letter or digit.
pub fn validate_plugin_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 64 {
        return Err("must be 1 to 64 characters".into());
    }
    if !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Err("must start with a letter or digit".into());
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err("may contain only ASCII letters, digits, '_' and '-'".into());
    }
    Ok(())
}

fn validate_library(library: &str) -> Result<(), ManifestError> {
    let path = Path::new(library);
    if library.is_empty() {
        return Err(invalid("library", "is empty"));
    }
    if path.is_absolute()
        || path
            .components()
            .any(|c| !matches!(c, Component::Normal(_)))
    {
        return Err(invalid(
            "library",
            format!("{library:?} must be a file name relative to plugin.toml, without `..`"),
        ));
    }
    Ok(())
}

impl Manifest {
    /// Parse `text`. `embedded` manifests need no `library` (the library is the file that
    /// carries them).
    pub fn parse(text: &str, embedded: bool) -> Result<Self, ManifestError> {
        let raw: RawManifest = toml::from_str(text).map_err(|e| {
            let (line, column) = e
                .span()
                .map(|span| line_column(text, span.start))
                .unwrap_or((1, 1));
            ManifestError::Syntax {
                line,
                column,
                message: e.message().trim().to_string(),
            }
        })?;
        let name = raw.name.ok_or(ManifestError::Missing("name"))?;
        validate_plugin_name(&name).map_err(|reason| invalid("name", reason))?;
        let version = raw.version.ok_or(ManifestError::Missing("version"))?;
        let version = Version::parse(&version).map_err(|e| {
            invalid(
                "version",
                format!("{version:?} is not a semver version: {e}"),
            )
        })?;
        let api = raw.api.ok_or(ManifestError::Missing("api"))?;
        let api = VersionReq::parse(&api)
            .map_err(|e| invalid("api", format!("{api:?} is not a semver requirement: {e}")))?;
        let library = match raw.library {
            Some(library) => {
                validate_library(&library)?;
                Some(library)
            }
            None if embedded => None,
            None => return Err(ManifestError::Missing("library")),
        };
        let overrides = raw.overrides.unwrap_or_default();
        for tool in &overrides {
            tools_core::entry::validate_name(tool)
                .map_err(|e| invalid("override", e.to_string()))?;
        }
        let isolation = match raw.isolation.as_deref() {
            None => None,
            Some(name) => Some(Isolation::parse(name).ok_or_else(|| {
                invalid(
                    "isolation",
                    format!("must be \"process\" or \"in-process\", not {name:?}"),
                )
            })?),
        };
        Ok(Manifest {
            name,
            version,
            description: raw.description.unwrap_or_default(),
            library,
            api,
            overrides,
            enabled_by_default: raw.enabled_by_default.unwrap_or(true),
            isolation,
            unknown_keys: raw.extra.into_keys().collect(),
        })
    }

    /// The library's path for a manifest in `dir`.
    pub fn library_path(&self, dir: &Path) -> Option<PathBuf> {
        self.library
            .as_deref()
            .map(|lib| dir.join(library_file_name(lib)))
    }

    /// True when the manifest lets the plugin replace core tool `tool`.
    pub fn may_override(&self, tool: &str) -> bool {
        self.overrides.iter().any(|t| t == tool)
    }
}

/// `foo` → `libfoo.so` / `foo.dll` / `libfoo.dylib`; a name with an extension is kept.
pub fn library_file_name(library: &str) -> String {
    let path = Path::new(library);
    if path.extension().is_some() {
        return library.to_string();
    }
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = format!(
        "{}{file}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => {
            parent.join(name).to_string_lossy().into_owned()
        }
        _ => name,
    }
}

/// The plugin-api version this host was built with.
pub fn host_api_version() -> Version {
    Version::parse(toolhost_plugin_api::API_VERSION).unwrap_or_else(|_| Version::new(0, 0, 0))
}

/// What this host accepts, as a caret requirement (`^0.1`, `^1`).
pub fn host_api_requirement() -> String {
    let host = host_api_version();
    if host.major == 0 {
        format!("^0.{}", host.minor)
    } else {
        format!("^{}", host.major)
    }
}

/// `^0.1` → `0.1`; anything more complex is shown as written.
fn describe_requirement(req: &VersionReq) -> String {
    match req.comparators.as_slice() {
        [c] if c.op == Op::Caret => {
            let mut out = c.major.to_string();
            if let Some(minor) = c.minor {
                out.push_str(&format!(".{minor}"));
            }
            if let Some(patch) = c.patch {
                out.push_str(&format!(".{patch}"));
            }
            out
        }
        _ => req.to_string(),
    }
}

/// A plugin built for a plugin-api this host cannot load.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[error("expected plugin-api {expected}, plugin built for {found}")]
pub struct ApiMismatch {
    /// What this host accepts (`^0.1`).
    pub expected: String,
    /// What the plugin was built for (`0.2`, `0.2.3`).
    pub found: String,
}

/// Check the manifest's `api` requirement, and the version the library was really
/// built against (from its embedded record) when known.
pub fn check_api(manifest: &Manifest, built_for: Option<&str>) -> Result<(), ApiMismatch> {
    let host = host_api_version();
    if !manifest.api.matches(&host) {
        return Err(ApiMismatch {
            expected: host_api_requirement(),
            found: describe_requirement(&manifest.api),
        });
    }
    if let Some(built) = built_for {
        let compatible = Version::parse(built).is_ok_and(|v| {
            // abi_stable's rule: same major (same minor for 0.x), library not older.
            let same_line = if host.major == 0 {
                v.major == 0 && v.minor == host.minor
            } else {
                v.major == host.major
            };
            same_line
                && v >= Version::new(host.major, if host.major == 0 { host.minor } else { 0 }, 0)
        });
        if !compatible {
            return Err(ApiMismatch {
                expected: host_api_requirement(),
                found: built.to_string(),
            });
        }
    }
    Ok(())
}

/// 1-based line and column of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "name = \"demo\"\nversion = \"1.2.0\"\nlibrary = \"demo\"\napi = \"^0.1\"\n";

    #[test]
    fn parses_a_good_manifest() {
        let m = Manifest::parse(GOOD, false).unwrap();
        assert_eq!(m.name, "demo");
        assert!(m.enabled_by_default);
        let lib = m.library_path(Path::new("/p")).unwrap();
        let expected = format!(
            "/p/{}demo{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        );
        assert_eq!(lib, PathBuf::from(expected));
    }

    #[test]
    fn manifest_errors_name_the_field() {
        let cases: &[(&str, &str)] = &[
            (
                "name = \"x\"\nversion = \"1.0.0\"\nlibrary = \"x\"\n",
                "missing `api`",
            ),
            (
                "version = \"1.0.0\"\nlibrary = \"x\"\napi = \"^0.1\"\n",
                "missing `name`",
            ),
            (
                "name = \"x\"\nversion = \"1.0.0\"\napi = \"^0.1\"\n",
                "missing `library`",
            ),
            (
                "name = \"a b\"\nversion = \"1\"\nlibrary = \"x\"\napi = \"^0.1\"\n",
                "`name`",
            ),
            (
                "name = \"x\"\nversion = \"one\"\nlibrary = \"x\"\napi = \"^0.1\"\n",
                "`version`",
            ),
            (
                "name = \"x\"\nversion = \"1.0.0\"\nlibrary = \"x\"\napi = \"~>0.1\"\n",
                "`api`",
            ),
            (
                "name = \"x\"\nversion = \"1.0.0\"\nlibrary = \"../x\"\napi = \"^0.1\"\n",
                "`library`",
            ),
            (
                "name = \"x\"\nversion = \"1.0.0\"\nlibrary = \"/x\"\napi = \"^0.1\"\n",
                "`library`",
            ),
            ("name = [\"x\"\n", "malformed plugin.toml: line 1"),
            ("name = 3\n", "malformed plugin.toml"),
        ];
        for (text, expected) in cases {
            let err = Manifest::parse(text, false).unwrap_err().to_string();
            assert!(err.contains(expected), "{text:?}: {err}");
        }
    }

    #[test]
    fn embedded_manifests_need_no_library_and_unknown_keys_are_kept() {
        let m = Manifest::parse(
            "name = \"x\"\nversion = \"1.0.0\"\napi = \"^0.1\"\nfuture = 1\n",
            true,
        )
        .unwrap();
        assert_eq!(m.library, None);
        assert_eq!(m.unknown_keys, vec!["future"]);
    }

    #[test]
    fn api_check_messages() {
        let mut m = Manifest::parse(GOOD, false).unwrap();
        assert!(check_api(&m, Some(toolhost_plugin_api::API_VERSION)).is_ok());
        m.api = VersionReq::parse("^0.2").unwrap();
        assert_eq!(
            check_api(&m, None).unwrap_err().to_string(),
            format!(
                "expected plugin-api {}, plugin built for 0.2",
                host_api_requirement()
            )
        );
        m.api = VersionReq::parse(&host_api_requirement()).unwrap();
        assert_eq!(
            check_api(&m, Some("0.0.9")).unwrap_err().to_string(),
            format!(
                "expected plugin-api {}, plugin built for 0.0.9",
                host_api_requirement()
            )
        );
    }

    #[test]
    fn library_names() {
        assert_eq!(library_file_name("libx.so"), "libx.so");
        assert!(library_file_name("x").ends_with(std::env::consts::DLL_SUFFIX));
    }
}
