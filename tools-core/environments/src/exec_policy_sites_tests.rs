//! "No spawn without the policy": `clippy.toml` forbids `Command::new` (std, tokio,
//! pty-process, portable-pty) outside the execution policy, and this test keeps the
//! list of places allowed to break that rule as it is. A new tool that starts a
//! process with `Command::new` fails clippy; one that adds an `allow` fails here,
//! until the spawn is justified and added below (with a comment at the site).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every attribute allowing a direct spawn, by file (relative to the workspace).
const ALLOWED: &[(&str, usize)] = &[
    // Test-only code (crate roots: `cfg_attr(test, ...)`, test crates, benches).
    ("host/src/lib.rs", 1),
    ("tests/src/lib.rs", 1),
    ("tests/tests/all.rs", 1),
    ("tools-core/approval/benches/approval.rs", 1),
    ("tools-core/approval/benches/differential.rs", 1),
    ("tools-core/approval/src/lib.rs", 1),
    ("tools-core/approval/tests/approval_prompt_pty.rs", 1),
    ("tools-core/benches/execute_code_rpc.rs", 1),
    ("tools-core/environments/src/lib.rs", 1),
    ("tools-core/src/lib.rs", 1),
    // The policy itself and the local-process spawner it configures.
    ("tools-core/environments/src/exec_policy.rs", 1),
    ("tools-core/environments/src/local_child.rs", 2),
    // Programs the model does not choose (each site says why).
    ("host/src/mcp/process.rs", 1),
    ("host/src/plugins/install.rs", 1),
    ("host/src/plugins/python/shim.rs", 1),
    ("plugins/browser/src/launch.rs", 1),
    ("tools-core/environments/src/sandbox.rs", 1),
    ("tools-core/environments/src/sdk_helper.rs", 2),
    ("tools-core/environments/src/singularity.rs", 3),
    ("tools-core/environments/src/ssh.rs", 3),
    ("tools-core/environments/src/ssh_shell.rs", 1),
    ("tools-core/src/cron/fire.rs", 1),
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if name == "target" || name.to_string_lossy().starts_with('.') {
            continue;
        }
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// An attribute line (`#[...]` or `#![...]`) naming the lint.
fn allows_spawn(line: &str) -> bool {
    let line = line.trim_start();
    (line.starts_with("#[") || line.starts_with("#![")) && line.contains("disallowed_methods")
}

#[test]
fn the_direct_spawn_allow_list_stays_as_it_is() {
    let root = workspace();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut found: BTreeMap<String, usize> = BTreeMap::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let n = text.lines().filter(|l| allows_spawn(l)).count();
        if n > 0 {
            let rel = file.strip_prefix(&root).unwrap_or(&file);
            found.insert(rel.display().to_string(), n);
        }
    }
    let expected: BTreeMap<String, usize> = ALLOWED
        .iter()
        .map(|(f, n)| ((*f).to_string(), *n))
        .collect();
    assert_eq!(found, expected);
}

#[test]
fn clippy_forbids_every_spawn_constructor() {
    let config = std::fs::read_to_string(workspace().join("clippy.toml")).unwrap();
    for path in [
        "std::process::Command::new",
        "tokio::process::Command::new",
        "pty_process::blocking::Command::new",
        "pty_process::Command::new",
        "portable_pty::CommandBuilder::new",
    ] {
        assert!(
            config.contains(&format!("path = \"{path}\"")),
            "clippy.toml no longer forbids {path}"
        );
    }
}

#[test]
fn the_attribute_matcher_sees_both_forms() {
    let table = [
        ("#[allow(clippy::disallowed_methods)]", true),
        (
            "    #![cfg_attr(test, allow(clippy::disallowed_methods))]",
            true,
        ),
        (
            "// #[allow(clippy::disallowed_methods)] in a comment",
            false,
        ),
        ("//! `#[allow(clippy::disallowed_methods)]` in a doc", false),
        ("#[allow(unsafe_code)]", false),
    ];
    for (line, want) in table {
        assert_eq!(allows_spawn(line), want, "{line}");
    }
}
