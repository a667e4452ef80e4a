//! `plugin.yaml`: the manifest of a Hermes directory plugin, read the way Hermes reads
//! it (docs/hermes/plugins-and-hooks.md) and turned into the host's [`Manifest`] so that
//! the rest of the pipeline (name collisions, enable/disable, listing) treats Python
//! plugins like native ones.
//!
//! Fields used: `name` (default: the directory name), `version` (stringified; made
//! semver when it is `1` or `1.2`), `description`, `kind`. Python plugins are off unless
//! listed in `plugins.enabled` (Hermes' opt-in allow-list) and always run out of
//! process. Unknown keys are ignored, as Hermes does.

use std::path::Path;

use semver::{Version, VersionReq};
use yaml_rust2::{Yaml, YamlLoader};

use crate::plugins::Isolation;
use crate::plugins::manifest::{Manifest, validate_plugin_name};

/// The manifest file names Hermes accepts, in the order it looks for them.
pub const MANIFEST_FILES: [&str; 2] = ["plugin.yaml", "plugin.yml"];

/// Why a `plugin.yaml` is unusable.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum YamlManifestError {
    /// The file could not be read.
    #[error("cannot read {file}: {reason}")]
    Read {
        /// The file.
        file: String,
        /// Why.
        reason: String,
    },
    /// Not YAML, or not a mapping.
    #[error("malformed {file}: {reason}")]
    Syntax {
        /// The file.
        file: String,
        /// What is wrong.
        reason: String,
    },
    /// A plugin name toolhost cannot use.
    #[error("{file}: `name` {reason}")]
    Name {
        /// The file.
        file: String,
        /// What is wrong.
        reason: String,
    },
}

/// The manifest file of a Hermes directory plugin in `dir`, if it has one.
pub fn manifest_file(dir: &Path) -> Option<std::path::PathBuf> {
    MANIFEST_FILES
        .iter()
        .map(|name| dir.join(name))
        .find(|path| path.is_file())
}

fn text(value: &Yaml) -> Option<String> {
    match value {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(n) => Some(n.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A Hermes version string as semver: read as PEP 440 (`1.2.3`, `1`, `0.2.0a9`,
/// `2026.6.11.1`, ...; see [`super::pep440`]), anything else `0.0.0` (the original
/// stays in the warning).
pub fn lenient_version(version: &str) -> Result<Version, Version> {
    if let Ok(v) = Version::parse(version) {
        return Ok(v);
    }
    super::pep440::parse(version).ok_or(Version::new(0, 0, 0))
}

/// The host manifest for a Python plugin named `name` at `version`.
pub fn python_manifest(name: &str, version: &str, description: &str) -> (Manifest, Vec<String>) {
    let mut warnings = Vec::new();
    let version = match lenient_version(version) {
        Ok(v) => v,
        Err(v) => {
            if !version.is_empty() {
                warnings.push(format!(
                    "version {version:?} is not a PEP 440 version; shown as 0.0.0"
                ));
            }
            v
        }
    };
    let manifest = Manifest {
        name: name.to_string(),
        version,
        description: description.to_string(),
        library: None,
        api: VersionReq::STAR,
        overrides: Vec::new(),
        enabled_by_default: false,
        isolation: Some(Isolation::Process),
        unknown_keys: Vec::new(),
    };
    (manifest, warnings)
}

/// Parse the `plugin.yaml` text of the plugin in directory `dir_name`.
pub fn parse(
    file: &str,
    text_in: &str,
    dir_name: &str,
) -> Result<(Manifest, Vec<String>), YamlManifestError> {
    let docs = YamlLoader::load_from_str(text_in).map_err(|e| YamlManifestError::Syntax {
        file: file.to_string(),
        reason: e.to_string(),
    })?;
    let doc = docs.into_iter().next().unwrap_or(Yaml::Null);
    let map = match doc {
        Yaml::Hash(map) => map,
        Yaml::Null => Default::default(),
        _ => {
            return Err(YamlManifestError::Syntax {
                file: file.to_string(),
                reason: "not a mapping".into(),
            });
        }
    };
    let get = |key: &str| map.get(&Yaml::String(key.to_string())).and_then(text);
    let name = get("name").unwrap_or_else(|| dir_name.to_string());
    validate_plugin_name(&name).map_err(|reason| YamlManifestError::Name {
        file: file.to_string(),
        reason,
    })?;
    let (manifest, mut warnings) = python_manifest(
        &name,
        &get("version").unwrap_or_default(),
        &get("description").unwrap_or_default(),
    );
    if let Some(kind) = get("kind")
        && kind != "standalone"
    {
        warnings.push(format!(
            "kind {kind:?}: only standalone plugins' tools and hooks are served"
        ));
    }
    Ok((manifest, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_made_semver() {
        let cases = [
            ("1.2.3", "1.2.3"),
            ("1", "1.0.0"),
            ("0.3", "0.3.0"),
            ("v2.1", "2.1.0"),
        ];
        for (given, expected) in cases {
            assert_eq!(lenient_version(given).unwrap().to_string(), expected);
        }
        assert_eq!(
            lenient_version("0.2.0a9").unwrap().to_string(),
            "0.2.0-a9",
            "pre-releases are versions"
        );
        assert_eq!(lenient_version("beta"), Err(Version::new(0, 0, 0)));
    }

    #[test]
    fn manifest_fields_and_defaults() {
        let (m, warnings) = parse(
            "plugin.yaml",
            "name: noisegate\nversion: \"0.3.3\"\ndescription: Gate\nprovides_hooks: [x]\n",
            "dir",
        )
        .unwrap();
        assert_eq!(m.name, "noisegate");
        assert_eq!(m.version.to_string(), "0.3.3");
        assert_eq!(m.description, "Gate");
        assert!(!m.enabled_by_default);
        assert_eq!(m.isolation, Some(Isolation::Process));
        assert!(warnings.is_empty());
        let (m, _) = parse("plugin.yaml", "version: 1.0\n", "from_dir").unwrap();
        assert_eq!(m.name, "from_dir");
        assert_eq!(m.version.to_string(), "1.0.0");
    }

    #[test]
    fn bad_manifests_are_refused() {
        assert!(matches!(
            parse("plugin.yaml", "- a\n- b\n", "d"),
            Err(YamlManifestError::Syntax { .. })
        ));
        assert!(matches!(
            parse("plugin.yaml", "name: \"a b\"\n", "d"),
            Err(YamlManifestError::Name { .. })
        ));
        assert!(matches!(
            parse("plugin.yaml", "name: [unclosed\n", "d"),
            Err(YamlManifestError::Syntax { .. })
        ));
    }
}
