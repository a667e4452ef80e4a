//! `patch` (toolset `file`): targeted edits — replace mode (find a unique string,
//! forgiving whitespace, indentation and typography; see [`super::fuzzy_match`]) and
//! V4A multi-file patches (see [`super::v4a`]).
//!
//! Hermes' behaviour: `mode` (default `replace`), `path`, `old_string`, `new_string`,
//! `replace_all`, `patch`; a unique match is required unless `replace_all`; a failed
//! match comes back with "Did you mean one of these sections?" snippets; CRLF endings
//! and a byte-order mark survive the edit; the result carries a unified diff and the
//! absolute paths edited; failures are `{"success": false, "error": …}`.
//!
//! Differences: `mode` is optional (Hermes lists it as required yet defaults it, so a
//! call without it failed validation here); every write is atomic through the task's file system; the result names
//! the fuzzy strategy that matched (`match_strategy`) so a model can tell it was
//! corrected; a non-UTF-8 file is refused instead of rewritten lossily; Hermes'
//! per-task staleness and repeated-failure trackers are not reproduced (the
//! "Did you mean" snippet carries the same advice); no `cross_profile` parameter; a file
//! modified between the read and the write (another process appending) is not
//! overwritten — the call fails with "file changed, re-read it"; secret files
//! (`[files] secret_files`) are refused; the guards check the canonical target and the
//! write follows no symlink after the check.

use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::context::ToolContext;
use crate::entry::{Parallelism, ToolEntry};
use crate::error::{RegisterError, ToolError};
use crate::files::{ContentHash, FileKind, FileSystem};
use crate::services::CoreServices;
use crate::tools::args::{self, lenient};
use crate::tools::file_guard::checked_write_target;
use crate::tools::file_lookup::{io_failure, similar_files, write_failure};
use crate::tools::fuzzy_match::{MatchError, Strategy, closest_sections, find_and_replace};
use crate::tools::guarded_write::{GuardedArea, approve_write, guarded_area};
use crate::tools::secret_files::{SecretFiles, configured, secret_refusal};
use crate::tools::text_file::{
    TextStyle, binary_extension, diff_label, looks_binary, unified_diff,
};
use crate::tools::v4a;
use crate::tools::write_file::lint;

fn schema() -> Value {
    json!({
        "description": "Targeted find-and-replace edits in files. Use this instead of sed/awk in \
            terminal. Uses fuzzy matching (whitespace, indentation, escapes, typographic \
            quotes) so minor differences won't break it; the result names the strategy when \
            the match was not exact. Returns a unified diff.\n\n\
            REPLACE MODE (mode='replace', default): find a unique string and replace it. \
            REQUIRED PARAMETERS: mode, path, old_string, new_string.\n\
            PATCH MODE (mode='patch'): apply V4A multi-file patches for bulk changes. \
            REQUIRED PARAMETERS: mode, patch.",
        "parameters": {
            "type": "object",
            "properties": {
                "mode": {
                    "type": "string",
                    "enum": ["replace", "patch"],
                    "description": "Edit mode. 'replace' (default): requires path + old_string + \
                        new_string. 'patch': requires patch content only.",
                    "default": "replace"
                },
                "path": {
                    "type": "string",
                    "description": "REQUIRED when mode='replace'. File path to edit."
                },
                "old_string": {
                    "type": "string",
                    "description": "REQUIRED when mode='replace'. Exact text to find and replace. \
                        Must be unique in the file unless replace_all=true. Include surrounding \
                        context lines to ensure uniqueness."
                },
                "new_string": {
                    "type": "string",
                    "description": "REQUIRED when mode='replace'. Replacement text. Pass empty \
                        string '' to delete the matched text."
                },
                "replace_all": {
                    "type": "boolean",
                    "description": "Replace all occurrences instead of requiring a unique match \
                        (default: false)",
                    "default": false
                },
                "patch": {
                    "type": "string",
                    "description": "REQUIRED when mode='patch'. V4A format patch content. \
                        Format:\n*** Begin Patch\n*** Update File: path/to/file\n@@ context hint @@\n \
                        context line\n-removed line\n+added line\n*** End Patch"
                }
            },
            "required": []
        }
    })
}

/// Build the `patch` tool.
pub fn build(services: &Arc<CoreServices>) -> Result<ToolEntry, RegisterError> {
    let svc = Arc::clone(services);
    let secrets = configured(services, "patch")?;
    ToolEntry::builder("patch", "file")
        .schema(&schema())
        .emoji("🔧")
        .parallelism(Parallelism::PathScoped("path".into()))
        .sync_handler(move |args, ctx| patch(&svc, &secrets, args, ctx))
        .build()
}

/// `{"success": false, "error": message}`.
fn failure(message: impl Into<String>) -> Value {
    json!({"success": false, "error": message.into()})
}

fn with_success_false(mut value: Value) -> Value {
    if let Some(obj) = value.as_object_mut() {
        let mut out = Map::new();
        out.insert("success".into(), json!(false));
        out.append(obj);
        return Value::Object(out);
    }
    value
}

/// What every mode needs.
struct Patcher<'a> {
    services: &'a CoreServices,
    ctx: &'a ToolContext,
    secrets: &'a SecretFiles,
    fs: &'a dyn FileSystem,
}

impl Patcher<'_> {
    /// The canonical path to edit for `path` as written, or the failure result.
    fn target(&self, path: &str) -> Result<(std::path::PathBuf, std::path::PathBuf), Value> {
        let resolved = self.fs.resolve(path);
        if self.secrets.is_secret(self.fs, &resolved) {
            return Err(failure(secret_refusal(path)));
        }
        let target =
            checked_write_target(self.fs, &resolved, path, &self.services.home).map_err(failure)?;
        match guarded_area(&self.services.home, &[resolved.as_path(), target.as_path()]) {
            None => {}
            Some(GuardedArea::Skills { .. }) => {
                return Err(failure(format!(
                    "Refusing to patch '{path}': files in toolhost's skills directory are \
                     edited with skill_manage (action='patch' or 'edit'), which runs the \
                     skills guard on the result."
                )));
            }
            Some(area) => {
                approve_write(self.services, self.ctx, "patch", path, &area, None)
                    .map_err(failure)?;
            }
        }
        Ok((resolved, target))
    }
}

/// The `patch` tool's arguments (Hermes' names; see the schema above). Which ones a
/// call needs depends on `mode`, so each is optional and checked by its mode.
#[derive(Debug, Deserialize)]
pub struct PatchArgs {
    /// `replace` (the default) or `patch`.
    #[serde(default, deserialize_with = "lenient::string")]
    mode: Option<String>,
    /// Replace mode: the file.
    #[serde(default, deserialize_with = "lenient::string")]
    path: Option<String>,
    /// Replace mode: the text to find.
    #[serde(default, deserialize_with = "lenient::string")]
    old_string: Option<String>,
    /// Replace mode: its replacement.
    #[serde(default, deserialize_with = "lenient::string")]
    new_string: Option<String>,
    /// Replace mode: every occurrence.
    #[serde(default, deserialize_with = "lenient::boolean")]
    replace_all: Option<bool>,
    /// Patch mode: the V4A patch.
    #[serde(default, deserialize_with = "lenient::string")]
    patch: Option<String>,
}

fn patch(
    services: &CoreServices,
    secrets: &SecretFiles,
    args: Value,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let args: PatchArgs = args::parse(args)?;
    let fs = services.files.for_task(ctx.task_key());
    let patcher = Patcher {
        services,
        ctx,
        secrets,
        fs: fs.as_ref(),
    };
    match args.mode.as_deref().unwrap_or("replace") {
        "replace" => Ok(replace_mode(&patcher, &args)),
        "patch" => Ok(v4a_mode(&patcher, &args)),
        other => Ok(failure(format!(
            "Unknown mode: {other}. Use 'replace' or 'patch'."
        ))),
    }
}

fn replace_mode(patcher: &Patcher<'_>, args: &PatchArgs) -> Value {
    let fs = patcher.fs;
    let Some(path) = args.path.as_deref().filter(|p| !p.trim().is_empty()) else {
        return failure("path required (mode='replace' needs path, old_string and new_string)");
    };
    let (Some(old), Some(new)) = (args.old_string.as_deref(), args.new_string.as_deref()) else {
        return failure("old_string and new_string required");
    };
    let replace_all = args.replace_all.unwrap_or(false);
    let (resolved, target) = match patcher.target(path) {
        Ok(paths) => paths,
        Err(result) => return result,
    };
    let (original, style, hash) = match load_text(fs, &target, path) {
        Ok(loaded) => loaded,
        Err(result) => return result,
    };
    let old = old.replace("\r\n", "\n");
    let new = new.replace("\r\n", "\n");
    let replaced = match find_and_replace(&original, &old, &new, replace_all) {
        Ok(replaced) => replaced,
        Err(err) => return match_failure(&err, path, &old, &original),
    };
    let bytes = style.encode(&replaced.content);
    if let Err(err) = fs.write_atomic_if_unchanged(&target, bytes.as_bytes(), &hash) {
        return with_success_false(write_failure(path, &err));
    }
    let shown = resolved.display().to_string();
    let mut result = Map::new();
    result.insert("success".into(), json!(true));
    result.insert(
        "diff".into(),
        json!(unified_diff(
            &original,
            &replaced.content,
            &diff_label("a", path),
            &diff_label("b", path)
        )),
    );
    result.insert("files_modified".into(), json!([shown]));
    result.insert("resolved_path".into(), json!(shown));
    result.insert("replacements".into(), json!(replaced.count));
    if replaced.strategy != Strategy::Exact {
        result.insert("match_strategy".into(), json!(replaced.strategy.name()));
    }
    if let Some(lint) = lint(&resolved, &replaced.content) {
        result.insert("lint".into(), lint);
    }
    Value::Object(result)
}

/// Read a file for editing: existing, regular, text, UTF-8; with the hash of the
/// bytes read (the write checks the file still has them).
fn load_text(
    fs: &dyn FileSystem,
    resolved: &Path,
    shown: &str,
) -> Result<(String, TextStyle, ContentHash), Value> {
    match fs.metadata(resolved) {
        Ok(meta) if meta.kind == FileKind::File => {}
        Ok(_) => {
            return Err(failure(format!(
                "Cannot patch '{shown}': not a regular file"
            )));
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            let mut result = failure(format!("Failed to read file: {shown} (file not found)"));
            let similar = similar_files(fs, resolved, shown);
            if !similar.is_empty()
                && let Some(obj) = result.as_object_mut()
            {
                obj.insert("similar_files".into(), json!(similar));
            }
            return Err(result);
        }
        Err(err) => return Err(with_success_false(io_failure("read", shown, &err))),
    }
    if let Some(ext) = binary_extension(resolved) {
        return Err(failure(format!(
            "Cannot patch binary file '{shown}' (.{ext})"
        )));
    }
    let bytes = fs
        .read(resolved)
        .map_err(|err| with_success_false(io_failure("read", shown, &err)))?;
    if looks_binary(&bytes[..bytes.len().min(8192)]) {
        return Err(failure(format!(
            "Cannot patch binary file '{shown}': it contains binary data"
        )));
    }
    let (text, style) = TextStyle::decode(&bytes).ok_or_else(|| {
        failure(format!(
            "Cannot patch '{shown}': it is not valid UTF-8 text and would be corrupted. Use \
             the terminal to edit it."
        ))
    })?;
    Ok((text, style, ContentHash::of(&bytes)))
}

fn match_failure(err: &MatchError, path: &str, old: &str, content: &str) -> Value {
    let mut result = Map::new();
    result.insert("success".into(), json!(false));
    if *err == MatchError::NotFound {
        let mut message = format!("Could not find a match for old_string in {path}");
        let sections = closest_sections(old, content);
        if sections.is_empty() {
            result.insert(
                "_hint".into(),
                json!(
                    "old_string not found. Use read_file to verify the current content, or \
                     search_files to locate the text."
                ),
            );
        } else {
            message.push_str("\n\nDid you mean one of these sections?\n");
            message.push_str(&sections);
        }
        result.insert("error".into(), json!(message));
    } else {
        result.insert("error".into(), json!(err.to_string()));
    }
    Value::Object(result)
}

fn v4a_mode(patcher: &Patcher<'_>, args: &PatchArgs) -> Value {
    let fs = patcher.fs;
    let Some(text) = args.patch.as_deref().filter(|p| !p.trim().is_empty()) else {
        return failure("patch content required (mode='patch')");
    };
    let ops = match v4a::parse(text) {
        Ok(ops) if ops.is_empty() => {
            return failure(
                "Patch contains no operations: expected '*** Update File:', '*** Add File:', \
                 '*** Delete File:' or '*** Move File:' headers",
            );
        }
        Ok(ops) => ops,
        Err(err) => return failure(format!("Failed to parse patch: {err}")),
    };
    // Every path checked once; the plan then works on exactly the checked targets.
    let mut targets = std::collections::HashMap::new();
    for path in v4a::paths(&ops) {
        if v4a::has_traversal(path) {
            return failure(format!(
                "V4A patch header contains '..' traversal: {path:?}. Use a path relative to \
                 the working directory (no '..') or an absolute path."
            ));
        }
        match patcher.target(path) {
            Ok((_, target)) => {
                targets.insert(path.to_string(), target);
            }
            Err(result) => return result,
        }
    }
    let resolve = |p: &str| {
        targets
            .get(p)
            .cloned()
            .unwrap_or_else(|| fs.canonicalize(&fs.resolve(p)))
    };
    let plan = match v4a::plan(&ops, fs, &resolve) {
        Ok(plan) => plan,
        Err(errors) => {
            let list: Vec<String> = errors.iter().map(|e| format!("  • {e}")).collect();
            return failure(format!(
                "Patch validation failed (no files were modified):\n{}",
                list.join("\n")
            ));
        }
    };
    let failures = v4a::apply(&plan, fs);
    let mut result = Map::new();
    result.insert("success".into(), json!(failures.is_empty()));
    result.insert("diff".into(), json!(plan.diffs.join("\n")));
    for (key, list) in [
        ("files_modified", &plan.modified),
        ("files_created", &plan.created),
        ("files_deleted", &plan.deleted),
    ] {
        if !list.is_empty() {
            result.insert(key.into(), json!(list));
        }
    }
    if !failures.is_empty() {
        let list: Vec<String> = failures.iter().map(|e| format!("  • {e}")).collect();
        result.insert(
            "error".into(),
            json!(format!(
                "Apply phase failed (state may be inconsistent — run `git diff` to assess):\n{}",
                list.join("\n")
            )),
        );
    }
    Value::Object(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::LocalFileSystemProvider;
    use crate::home::Home;
    use crate::registry::Registry;

    struct Fixture {
        dir: tempfile::TempDir,
        registry: Registry,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let mut services = CoreServices::for_tests(Home::at(dir.path().join("toolhost-home")));
        services.files = Arc::new(LocalFileSystemProvider::new(dir.path()));
        let registry = Registry::new();
        registry.register(build(&Arc::new(services)).unwrap());
        Fixture { dir, registry }
    }

    impl Fixture {
        fn put(&self, name: &str, content: &str) {
            std::fs::write(self.dir.path().join(name), content).unwrap();
        }
        fn get(&self, name: &str) -> String {
            std::fs::read_to_string(self.dir.path().join(name)).unwrap()
        }
        fn patch(&self, args: Value) -> Value {
            let r = self
                .registry
                .dispatch_blocking("patch", args, &ToolContext::default());
            serde_json::from_str(&r.text).unwrap()
        }
    }

    #[test]
    fn replace_unique_match_returns_diff() {
        let f = fixture();
        f.put("a.py", "x = 1\ny = 2\n");
        let r = f.patch(json!({"mode": "replace", "path": "a.py", "old_string": "y = 2", "new_string": "y = 3"}));
        assert_eq!(r["success"], true, "{r}");
        assert!(r["diff"].as_str().unwrap().contains("-y = 2\n+y = 3"));
        assert!(r.get("match_strategy").is_none());
        assert_eq!(f.get("a.py"), "x = 1\ny = 3\n");
    }

    #[test]
    fn replace_refuses_ambiguous_match() {
        let f = fixture();
        f.put("a.txt", "dup\ndup\n");
        let r = f.patch(json!({"path": "a.txt", "old_string": "dup", "new_string": "one"}));
        assert_eq!(r["success"], false);
        assert!(
            r["error"].as_str().unwrap().contains("Found 2 matches"),
            "{r}"
        );
        assert_eq!(f.get("a.txt"), "dup\ndup\n");
        let r = f.patch(
            json!({"path": "a.txt", "old_string": "dup", "new_string": "one", "replace_all": true}),
        );
        assert_eq!(r["replacements"], 2);
        assert_eq!(f.get("a.txt"), "one\none\n");
    }

    #[test]
    fn replace_no_match_suggests_sections() {
        let f = fixture();
        f.put("a.rs", "fn alpha() {}\nfn beta() {}\n");
        let r = f.patch(json!({"path": "a.rs", "old_string": "fn betta() {}", "new_string": "x"}));
        let error = r["error"].as_str().unwrap();
        assert!(error.starts_with("Could not find a match for old_string in a.rs"));
        assert!(
            error.contains("Did you mean one of these sections?"),
            "{error}"
        );
    }

    #[test]
    fn replace_reports_fuzzy_strategy_and_keeps_crlf() {
        let f = fixture();
        f.put("w.txt", "if x:\r\n    go()\r\n");
        let r = f.patch(json!({"path": "w.txt", "old_string": "if x:\n  go()", "new_string": "if x:\n  stop()"}));
        assert_eq!(r["match_strategy"], "line_trimmed", "{r}");
        assert_eq!(f.get("w.txt"), "if x:\r\n    stop()\r\n");
    }

    #[test]
    fn replace_missing_file_and_missing_args() {
        let f = fixture();
        let r = f.patch(json!({"path": "nope.txt", "old_string": "a", "new_string": "b"}));
        assert_eq!(r["success"], false);
        assert!(r["error"].as_str().unwrap().contains("file not found"));
        let r = f.patch(json!({"path": "nope.txt"}));
        assert_eq!(r["error"], "old_string and new_string required");
    }

    #[test]
    fn mode_defaults_to_replace_and_validates_without_it() {
        let f = fixture();
        let entry = f.registry.get("patch").unwrap();
        assert!(
            entry
                .validator()
                .unwrap()
                .is_valid(&json!({"path": "a", "old_string": "x", "new_string": "y"}))
        );
        f.put("m.txt", "x\n");
        let r = f.patch(json!({"path": "m.txt", "old_string": "x", "new_string": "y"}));
        assert_eq!(r["success"], true, "{r}");
    }

    #[test]
    fn replace_refuses_non_utf8_files() {
        let f = fixture();
        std::fs::write(f.dir.path().join("l1.txt"), b"caf\xe9 au lait\n").unwrap();
        let r = f.patch(json!({"path": "l1.txt", "old_string": "au", "new_string": "with"}));
        assert!(r["error"].as_str().unwrap().contains("UTF-8"), "{r}");
    }

    #[test]
    fn v4a_multi_file_patch() {
        let f = fixture();
        f.put("a.py", "def f():\n    return 1\n");
        f.put("old.txt", "bye\n");
        let patch = "*** Begin Patch\n*** Update File: a.py\n@@ def f(): @@\n def f():\n-    return 1\n+    return 2\n*** Add File: new/b.py\n+print('hi')\n*** Delete File: old.txt\n*** End Patch";
        let r = f.patch(json!({"mode": "patch", "patch": patch}));
        assert_eq!(r["success"], true, "{r}");
        assert_eq!(f.get("a.py"), "def f():\n    return 2\n");
        assert_eq!(f.get("new/b.py"), "print('hi')\n");
        assert!(!f.dir.path().join("old.txt").exists());
        assert_eq!(r["files_created"].as_array().unwrap().len(), 1);
        assert_eq!(r["files_deleted"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn v4a_validation_failure_modifies_nothing() {
        let f = fixture();
        f.put("a.py", "one\n");
        let patch = "*** Begin Patch\n*** Add File: created.txt\n+x\n*** Update File: a.py\n-missing line\n+y\n*** End Patch";
        let r = f.patch(json!({"mode": "patch", "patch": patch}));
        assert_eq!(r["success"], false);
        assert!(
            r["error"]
                .as_str()
                .unwrap()
                .contains("no files were modified"),
            "{r}"
        );
        assert!(!f.dir.path().join("created.txt").exists());
        assert_eq!(f.get("a.py"), "one\n");
    }

    #[test]
    fn v4a_refuses_traversal_and_add_over_existing() {
        let f = fixture();
        let r = f.patch(json!({"mode": "patch", "patch": "*** Begin Patch\n*** Add File: ../x\n+y\n*** End Patch"}));
        assert!(r["error"].as_str().unwrap().contains("traversal"));
        f.put("e.txt", "keep\n");
        let r = f.patch(json!({"mode": "patch", "patch": "*** Begin Patch\n*** Add File: e.txt\n+y\n*** End Patch"}));
        assert!(
            r["error"].as_str().unwrap().contains("already exists"),
            "{r}"
        );
        assert_eq!(f.get("e.txt"), "keep\n");
    }

    #[test]
    fn v4a_move_file() {
        let f = fixture();
        f.put("from.txt", "content\n");
        let r = f.patch(json!({"mode": "patch", "patch": "*** Begin Patch\n*** Move File: from.txt -> sub/to.txt\n*** End Patch"}));
        assert_eq!(r["success"], true, "{r}");
        assert_eq!(f.get("sub/to.txt"), "content\n");
        assert!(!f.dir.path().join("from.txt").exists());
    }
}
