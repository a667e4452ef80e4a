//! The Python plugin host shipped inside toolhost (`hermes_host.py`, embedded in the
//! binary so that Python 3 is the only requirement) and how it is started: one child per
//! plugin, `python -c <source> <spec JSON>`, the spec naming what to import. It also
//! lists the `hermes_agent.plugins` entry points of an interpreter's environment
//! (`python -c <source> --list-entry-points`).

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::hermes_home::HERMES_HOME_ENV;
use crate::plugins::process::Launch;

/// The source of the Python plugin host.
pub const SOURCE: &str = include_str!("hermes_host.py");

/// How long listing entry points may take.
const LIST_TIMEOUT: Duration = Duration::from_secs(20);

/// What the child imports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A directory with `plugin.yaml` and `__init__.py`.
    Directory(PathBuf),
    /// An entry point of the `hermes_agent.plugins` group, by name.
    EntryPoint(String),
}

/// Everything the child is told (its one argument, as JSON).
#[derive(Clone, Debug, Serialize)]
pub struct Spec {
    /// The plugin's name (Hermes' manifest name).
    pub name: String,
    /// Hermes' key (the directory or entry-point name; the module slug comes from it).
    pub key: String,
    /// `directory` or `entrypoint`.
    pub kind: &'static str,
    /// The plugin directory (directory plugins).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// The entry point's name (pip plugins).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry_point: Option<String>,
    /// The manifest's version.
    pub version: String,
    /// The manifest's description.
    pub description: String,
    /// Hermes' source name (`user`, `project`, `entrypoint`).
    pub source: &'static str,
    /// `register_tool(override=True)` is allowed.
    pub allow_tool_override: bool,
    /// What `ctx.profile_name` answers.
    pub profile_name: String,
}

impl Spec {
    /// The spec for `target`, named `name`.
    pub fn new(name: &str, target: &Target, source: &'static str) -> Self {
        let (kind, path, entry_point, key) = match target {
            Target::Directory(dir) => {
                let key = dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| name.to_string());
                ("directory", Some(dir.clone()), None, key)
            }
            Target::EntryPoint(ep) => ("entrypoint", None, Some(ep.clone()), ep.clone()),
        };
        Spec {
            name: name.to_string(),
            key,
            kind,
            path,
            entry_point,
            version: String::new(),
            description: String::new(),
            source,
            allow_tool_override: false,
            profile_name: "default".into(),
        }
    }

    /// How to start the plugin host for this spec with `interpreter`, its Hermes home
    /// being `hermes_home` (`super::hermes_home`).
    pub fn launch(&self, interpreter: &Path, hermes_home: &Path) -> Launch {
        let spec = serde_json::to_string(self).unwrap_or_else(|_| "{}".into());
        Launch::Program {
            program: interpreter.to_path_buf(),
            args: vec!["-c".into(), SOURCE.into(), OsString::from(spec)],
            env: vec![
                ("PYTHONUNBUFFERED".into(), "1".into()),
                (HERMES_HOME_ENV.into(), hermes_home.into()),
            ],
        }
    }
}

/// What the Python plugin host adds to the declaration.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct PythonExtras {
    /// What the plugin registered that toolhost cannot serve.
    pub unsupported: Vec<String>,
    /// Tools registered with `override=True`.
    pub overrides: Vec<String>,
    /// The interpreter's version.
    pub python_version: String,
    /// `sys.executable` of the child.
    pub interpreter: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Hello {
    python: PythonExtras,
}

/// The Python part of a declaration text (empty when absent or unreadable).
pub fn extras(declaration: &str) -> PythonExtras {
    serde_json::from_str::<Hello>(declaration)
        .map(|h| h.python)
        .unwrap_or_default()
}

/// One `hermes_agent.plugins` entry point.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct EntryPoint {
    /// Its name (the plugin's name and key in Hermes).
    pub name: String,
    /// `module` or `module:attr`.
    pub value: String,
    /// The distribution that declares it.
    pub distribution: String,
    /// The distribution's version.
    pub version: String,
    /// The distribution's summary.
    pub summary: String,
    /// Where the distribution is installed.
    pub location: String,
}

/// Why the entry points could not be listed.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    /// The interpreter could not be started.
    #[error("cannot run {interpreter}: {source}")]
    Spawn {
        /// The interpreter.
        interpreter: String,
        /// Why.
        source: std::io::Error,
    },
    /// It took too long.
    #[error("{interpreter} did not list its entry points within {seconds}s")]
    Timeout {
        /// The interpreter.
        interpreter: String,
        /// The limit.
        seconds: u64,
    },
    /// It failed or printed something else.
    #[error("{interpreter} could not list its entry points: {reason}")]
    Failed {
        /// The interpreter.
        interpreter: String,
        /// What happened.
        reason: String,
    },
}

/// The `hermes_agent.plugins` entry points installed for `interpreter`.
// Lists installed entry points (imports no plugin); plugin processes start in process/launch.rs through the execution policy.
#[allow(clippy::disallowed_methods)]
pub fn list_entry_points(interpreter: &Path) -> Result<Vec<EntryPoint>, ListError> {
    let shown = interpreter.display().to_string();
    let mut child = Command::new(interpreter)
        .args(["-c", SOURCE, "--list-entry-points"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| ListError::Spawn {
            interpreter: shown.clone(),
            source,
        })?;
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > LIST_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(ListError::Timeout {
                    interpreter: shown,
                    seconds: LIST_TIMEOUT.as_secs(),
                });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => {
                return Err(ListError::Failed {
                    interpreter: shown,
                    reason: e.to_string(),
                });
            }
        }
    };
    let mut out = String::new();
    let mut err = String::new();
    if let Some(mut stdout) = child.stdout.take() {
        let _ = stdout.read_to_string(&mut out);
    }
    if let Some(mut stderr) = child.stderr.take() {
        let _ = stderr.read_to_string(&mut err);
    }
    if !status.success() {
        let last = err.lines().last().unwrap_or("").to_string();
        return Err(ListError::Failed {
            interpreter: shown,
            reason: format!("{status}: {last}"),
        });
    }
    serde_json::from_str(out.trim()).map_err(|e| ListError::Failed {
        interpreter: shown,
        reason: format!("unreadable answer ({e})"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_name_what_to_import() {
        let dir = Spec::new(
            "demo",
            &Target::Directory(PathBuf::from("/p/my-plugin")),
            "user",
        );
        assert_eq!(dir.key, "my-plugin");
        assert_eq!(dir.kind, "directory");
        let ep = Spec::new(
            "loop",
            &Target::EntryPoint("hermes-loop".into()),
            "entrypoint",
        );
        let json = serde_json::to_value(&ep).unwrap();
        assert_eq!(json["entry_point"], "hermes-loop");
        assert_eq!(json["kind"], "entrypoint");
        assert!(json.get("path").is_none());
    }

    #[test]
    fn launches_run_the_embedded_source() {
        let spec = Spec::new("demo", &Target::EntryPoint("demo".into()), "entrypoint");
        let Launch::Program { program, args, env } = spec.launch(
            Path::new("/usr/bin/python3"),
            Path::new("/h/python-plugins/hh"),
        ) else {
            panic!("not a program launch");
        };
        assert_eq!(program, PathBuf::from("/usr/bin/python3"));
        assert_eq!(args[0], "-c");
        assert_eq!(args[1], SOURCE);
        assert!(
            env.contains(&("HERMES_HOME".into(), "/h/python-plugins/hh".into())),
            "{env:?}"
        );
    }

    #[test]
    fn extras_are_read_from_the_declaration() {
        let text = r#"{"tools":[],"python":{"unsupported":["register_command(x)"],"python_version":"3.11.7"}}"#;
        let extras = extras(text);
        assert_eq!(extras.unsupported, ["register_command(x)"]);
        assert_eq!(extras.python_version, "3.11.7");
        assert_eq!(super::extras("{}"), PythonExtras::default());
    }

    #[test]
    fn entry_points_of_a_plain_python_are_listed() {
        // Real python3: an environment without Hermes plugins lists none (or only the
        // ones installed), and always answers JSON.
        let Some(python) =
            super::super::PythonSettings::default().resolve_interpreter(Path::new("/"))
        else {
            panic!("python3 is required for the Python plugin tests");
        };
        let listed = list_entry_points(&python).expect("listing works");
        assert!(listed.iter().all(|ep| !ep.name.is_empty()), "{listed:?}");
    }

    #[test]
    fn a_missing_interpreter_is_reported() {
        let err = list_entry_points(Path::new("/no/such/python")).unwrap_err();
        assert!(matches!(err, ListError::Spawn { .. }), "{err}");
    }
}
