//! Which files the file tools treat as secret: the `[files] secret_files` patterns
//! (default [`DEFAULT_SECRET_FILES`](crate::settings::DEFAULT_SECRET_FILES): `.env`
//! and its variants, private keys, credential stores).
//!
//! A secret file is never shown to the model: `read_file` refuses it, `search_files`
//! omits its matches (and its name from file listings), `patch` refuses to edit it (a
//! failed match would quote it, a diff shows it), `write_file` refuses to overwrite it
//! (the model would be replacing values it was never shown). Patterns are matched on
//! the path as written *and* on the canonical target, so a symlink named `notes.txt`
//! that points at `.env` is secret too; a regular file with more than one hard link is
//! secret whatever its name (a hard link to `.env` is still `.env`; [`hard_linked`]).
//!
//! The patterns are checked when the tools are built (an invalid one fails the build)
//! but compiled into matchers only at the first check: compiling the default list's
//! glob sets costs about a millisecond of regex building, which every `toolhost`
//! start would otherwise pay for tools it may never call (BENCHMARKS.md, cold start).
//!
//! Spilled copies — tool results too large for the model's context, saved under
//! `<home>/results` — hold raw tool output (a terminal's `cat .env`); reading or
//! searching them applies the full redaction terminal output gets.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use globset::{Candidate, Glob, GlobBuilder, GlobSet, GlobSetBuilder};

use crate::error::RegisterError;
use crate::files::{FileSystem, canonical_local};
use crate::home::Home;
use crate::redact::{redact, redact_file_content};
use crate::services::CoreServices;

/// The patterns of one kind, compiled into one set (matched in one pass per path).
#[derive(Debug)]
struct Scope {
    set: GlobSet,
    /// For each pattern of `set`, its position in the configured list.
    order: Vec<usize>,
}

impl Scope {
    /// The latest (in configured order) of the patterns matching `candidate`.
    fn last_match(&self, candidate: &Candidate<'_>, hits: &mut Vec<usize>) -> Option<usize> {
        self.set.matches_candidate_into(candidate, hits);
        hits.iter().map(|&i| self.order[i]).max()
    }
}

/// The secret-file policy: patterns matching the file name, the whole path (those with
/// a `/`), or the path relative to the user's home (`~/…`), each kind one [`GlobSet`]
/// compiled at the first check; the last matching pattern decides.
#[derive(Debug)]
pub struct SecretFiles {
    /// For each configured pattern, in order: `false` for `!pattern` (an exception).
    secret: Vec<bool>,
    /// The checked patterns, not yet compiled into sets.
    pending: [ScopeBuilder; 3],
    /// The sets, once compiled; `Err` when a set failed to compile (every path is then
    /// secret: the policy fails closed).
    compiled: OnceLock<Result<Compiled, PatternError>>,
}

/// The three compiled scopes.
#[derive(Debug)]
struct Compiled {
    by_name: Scope,
    by_path: Scope,
    in_home: Scope,
}

/// A pattern that does not compile.
#[derive(Debug, thiserror::Error)]
#[error("invalid secret_files pattern {pattern:?}: {reason}")]
pub struct PatternError {
    /// The pattern as configured.
    pub pattern: String,
    /// What is wrong with it.
    pub reason: String,
}

/// The patterns of one [`Scope`], checked, in configured order.
#[derive(Debug, Default)]
struct ScopeBuilder {
    globs: Vec<Glob>,
    order: Vec<usize>,
}

impl ScopeBuilder {
    fn build(&self) -> Result<Scope, PatternError> {
        let mut set = GlobSetBuilder::new();
        for glob in &self.globs {
            set.add(glob.clone());
        }
        let set = set.build().map_err(|err| PatternError {
            pattern: err.glob().unwrap_or_default().to_string(),
            reason: err.to_string(),
        })?;
        Ok(Scope {
            set,
            order: self.order.clone(),
        })
    }
}

impl SecretFiles {
    /// Check `patterns` (see [`crate::settings::FileToolSettings::secret_files`]); they
    /// are compiled at the first [`SecretFiles::matches`].
    pub fn new(patterns: &[String]) -> Result<Self, PatternError> {
        let mut secret = Vec::with_capacity(patterns.len());
        let [mut by_name, mut by_path, mut in_home] = <[ScopeBuilder; 3]>::default();
        for raw in patterns {
            let (is_secret, pattern) = match raw.trim().strip_prefix('!') {
                Some(rest) => (false, rest.trim()),
                None => (true, raw.trim()),
            };
            if pattern.is_empty() {
                continue;
            }
            let (home_relative, pattern) = match pattern.strip_prefix("~/") {
                Some(rest) => (true, rest),
                None => (false, pattern),
            };
            let glob = GlobBuilder::new(pattern)
                .literal_separator(true)
                .case_insensitive(true)
                .build()
                .map_err(|err| PatternError {
                    pattern: raw.clone(),
                    reason: err.to_string(),
                })?;
            let scope = if home_relative {
                &mut in_home
            } else if pattern.contains('/') {
                &mut by_path
            } else {
                &mut by_name
            };
            scope.globs.push(glob);
            scope.order.push(secret.len());
            secret.push(is_secret);
        }
        Ok(SecretFiles {
            secret,
            pending: [by_name, by_path, in_home],
            compiled: OnceLock::new(),
        })
    }

    /// The compiled scopes (compiled by the first caller).
    fn compiled(&self) -> Result<&Compiled, &PatternError> {
        self.compiled
            .get_or_init(|| {
                let [by_name, by_path, in_home] = &self.pending;
                Ok(Compiled {
                    by_name: by_name.build()?,
                    by_path: by_path.build()?,
                    in_home: in_home.build()?,
                })
            })
            .as_ref()
    }

    /// True when `path` (absolute) is secret by the patterns alone; `home` expands `~/`.
    /// If the patterns could not be compiled, every path is secret.
    pub fn matches(&self, path: &Path, home: Option<&Path>) -> bool {
        let Ok(sets) = self.compiled() else {
            return true;
        };
        let mut hits = Vec::new();
        let name = path
            .file_name()
            .and_then(|n| sets.by_name.last_match(&Candidate::new(n), &mut hits));
        let whole = sets.by_path.last_match(&Candidate::new(path), &mut hits);
        let relative = home
            .and_then(|h| path.strip_prefix(h).ok())
            .and_then(|rel| sets.in_home.last_match(&Candidate::new(rel), &mut hits));
        [name, whole, relative]
            .into_iter()
            .flatten()
            .max()
            .is_some_and(|last| self.secret[last])
    }

    /// True when `resolved` is secret as written or as its canonical target on `fs`
    /// (the user's home is tried as written and canonical too).
    pub fn is_secret(&self, fs: &dyn FileSystem, resolved: &Path) -> bool {
        let home = fs.home_dir();
        let real_home = home.as_deref().map(|h| fs.canonicalize(h));
        let real = fs.canonicalize(resolved);
        let homes = [home.as_deref(), real_home.as_deref()];
        let homes = if homes[0] == homes[1] {
            &homes[..1]
        } else {
            &homes[..]
        };
        let paths = [resolved, real.as_path()];
        let paths = if paths[0] == paths[1] {
            &paths[..1]
        } else {
            &paths[..]
        };
        paths
            .iter()
            .any(|p| homes.iter().any(|h| self.matches(p, *h)))
            || hard_linked(fs, resolved)
    }
}

/// True when the regular file at `path` has other names (hard links). Any of them may
/// be a secret file (`ln .env notes.txt`), and they cannot be listed without walking
/// the whole file system, so such a file is treated as secret: toolhost refuses it
/// rather than compare it with every secret file it might be (docs/guarded-writes.md,
/// "Secret files through a hard link"). Backends that cannot count links are judged by
/// name alone.
pub fn hard_linked(fs: &dyn FileSystem, path: &Path) -> bool {
    fs.link_count(path).is_some_and(|links| links > 1)
}

/// The policy configured in `services`, for building the tool `tool` (an invalid
/// pattern fails the build: the tool is not served rather than served unguarded).
pub fn configured(services: &CoreServices, tool: &str) -> Result<Arc<SecretFiles>, RegisterError> {
    SecretFiles::new(&services.settings.files.secret_files)
        .map(Arc::new)
        .map_err(|err| RegisterError::Build {
            name: tool.to_string(),
            reason: err.to_string(),
        })
}

/// Where spilled results live: `<home>/results` as given and canonical (only on the
/// local file system, where toolhost's home is).
pub fn spill_dirs(fs: &dyn FileSystem, home: &Home) -> Vec<PathBuf> {
    if fs.kind() != "local" {
        return Vec::new();
    }
    let dir = home.results_dir();
    let real = canonical_local(&dir).unwrap_or_else(|| dir.clone());
    if real == dir {
        vec![dir]
    } else {
        vec![dir, real]
    }
}

/// True when `path` (as walked or resolved; `real` = canonical) is a spilled copy of a
/// tool result: its text is tool output (a terminal's `cat .env`, an MCP server's
/// answer), so it is shown with the full redaction terminal output gets (secret
/// assignments too), not only the shape-based one of source files.
pub fn is_spilled_copy(spill_dirs: &[PathBuf], path: &Path, real: &Path) -> bool {
    spill_dirs
        .iter()
        .any(|dir| path.starts_with(dir) || real.starts_with(dir))
}

/// The redaction for text of `path`: full for spilled copies, shape-based otherwise.
pub fn redact_shown(text: &str, spilled: bool) -> String {
    if spilled {
        redact(text).into_owned()
    } else {
        redact_file_content(text).into_owned()
    }
}

/// The refusal `read_file` / `patch` give for a secret file.
pub fn secret_refusal(shown: &str) -> String {
    format!(
        "Access denied: {shown} is a secret file (environment file, key or credential \
         store, per the [files] secret_files setting) and is not shown to the model. If \
         you need its structure, read a template such as .env.example, or ask the user."
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::LocalFileSystem;
    use crate::settings::FileToolSettings;

    fn default_policy() -> SecretFiles {
        SecretFiles::new(&FileToolSettings::default().secret_files).unwrap()
    }

    #[test]
    fn default_patterns_classify_paths() {
        let policy = default_policy();
        let home = Some(Path::new("/home/u"));
        let secret = [
            "/w/.env",
            "/w/.ENV",
            "/w/.env.prod",
            "/w/.env.backup",
            "/w/.env.docker",
            "/w/prod.env",
            "/w/.envrc",
            "/w/certs/server.key",
            "/w/tls.pem",
            "/home/u/.ssh/id_ed25519",
            "/srv/x/.ssh/id_rsa",
            "/home/u/.aws/credentials",
            "/home/u/.netrc",
            "/w/.git-credentials",
        ];
        for p in secret {
            assert!(policy.matches(Path::new(p), home), "{p}");
        }
        let public = [
            "/w/.env.example",
            "/w/.env.sample",
            "/w/prod.env.example",
            "/w/src/env.rs",
            "/w/environment.md",
            "/home/u/.ssh/id_ed25519.pub",
            "/home/u/.ssh/known_hosts",
            "/w/.aws/credentials",
            "/w/keys.txt",
        ];
        for p in public {
            assert!(!policy.matches(Path::new(p), home), "{p}");
        }
    }

    #[test]
    fn last_matching_pattern_wins() {
        let policy =
            SecretFiles::new(&["*.txt".into(), "!notes.txt".into(), "notes.txt".into()]).unwrap();
        assert!(policy.matches(Path::new("/a/notes.txt"), None));
        let policy = SecretFiles::new(&["*.txt".into(), "!notes.txt".into()]).unwrap();
        assert!(!policy.matches(Path::new("/a/notes.txt"), None));
        assert!(policy.matches(Path::new("/a/other.txt"), None));
    }

    #[test]
    fn invalid_pattern_is_an_error_naming_it() {
        let err = SecretFiles::new(&["a[".into()]).unwrap_err();
        assert!(err.to_string().contains("a["), "{err}");
    }

    #[test]
    fn a_policy_whose_sets_failed_to_compile_treats_every_path_as_secret() {
        let policy = SecretFiles::new(&["*.key".into()]).unwrap();
        let failed = PatternError {
            pattern: "*.key".into(),
            reason: "compiled regex exceeds size limit".into(),
        };
        policy.compiled.set(Err(failed)).unwrap();
        assert!(policy.matches(Path::new("/w/readme.md"), None));
    }

    #[cfg(unix)]
    #[test]
    fn canonical_target_of_a_symlink_is_judged() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".env"), "A=1").unwrap();
        let link = dir.path().join("innocent.txt");
        std::os::unix::fs::symlink(dir.path().join(".env"), &link).unwrap();
        let fs = LocalFileSystem::new(dir.path());
        assert!(default_policy().is_secret(&fs, &link));
    }

    #[cfg(unix)]
    #[test]
    fn a_hard_link_to_a_secret_is_secret() {
        let dir = tempfile::tempdir().unwrap();
        let env = dir.path().join(".env");
        std::fs::write(&env, "API_KEY=sk-live-1234567890").unwrap();
        let link = dir.path().join("notes.txt");
        std::fs::hard_link(&env, &link).unwrap();
        let fs = LocalFileSystem::new(dir.path());
        assert!(default_policy().is_secret(&fs, &link));
    }

    #[cfg(unix)]
    #[test]
    fn a_file_with_one_name_is_judged_by_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let notes = dir.path().join("notes.txt");
        std::fs::write(&notes, "hello").unwrap();
        let fs = LocalFileSystem::new(dir.path());
        assert!(!default_policy().is_secret(&fs, &notes));
    }
}
