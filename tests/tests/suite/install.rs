//! Installing `toolhost` on `PATH`: the README's install (binary and bundled plugins in
//! one directory, a symlink on `PATH`) keeps the bundled plugins, and a binary copied on
//! its own warns on stderr instead of silently losing them.

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use toolhost_tests::{TestHome, stderr, stdout_json, target_dir, toolhost_bin};

/// `plugins list --json` run through `exe`, with bundled plugins found the default way.
fn plugins_list(home: &TestHome, exe: &Path) -> (Vec<Value>, String) {
    let out = Command::new(exe)
        .arg("--home")
        .arg(home.path())
        .args(["plugins", "list", "--json"])
        .env_remove("TOOLHOST_BUNDLED_PLUGINS")
        .env_remove("TOOLHOST_PLUGIN_PATH")
        .env_remove("TOOLHOST_HOME")
        .output()
        .expect("run the installed toolhost");
    assert!(out.status.success(), "{}", stderr(&out));
    let records = stdout_json(&out).as_array().cloned().unwrap_or_default();
    (records, stderr(&out))
}

fn bundled_names(records: &[Value]) -> Vec<String> {
    let mut names: Vec<String> = records
        .iter()
        .filter(|r| r["source"] == "bundled")
        .map(|r| r["name"].as_str().unwrap_or_default().to_string())
        .collect();
    names.sort();
    names
}

#[test]
fn a_copied_binary_warns_and_the_documented_install_keeps_the_plugins() {
    let home = TestHome::new();
    let root = tempfile::tempdir().unwrap();
    let lib = root.path().join("lib/toolhost");
    let bin = root.path().join("bin");
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(toolhost_bin(), lib.join("toolhost")).unwrap();
    std::os::unix::fs::symlink(lib.join("toolhost"), bin.join("toolhost")).unwrap();

    // The binary alone: no bundled plugins, and a warning that says what to do.
    let (records, err) = plugins_list(&home, &bin.join("toolhost"));
    assert_eq!(bundled_names(&records), Vec::<String>::new());
    assert!(err.contains("warning: no bundled plugins next to"), "{err}");
    assert!(err.contains("README \"Installing\""), "{err}");

    // README "Installing": the plugin libraries beside the binary, a symlink on PATH.
    let prefix = format!("{}toolhost_plugin_", std::env::consts::DLL_PREFIX);
    let mut copied = Vec::new();
    for entry in std::fs::read_dir(target_dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if let Some(plugin) = name
            .strip_prefix(&prefix)
            .and_then(|rest| rest.strip_suffix(std::env::consts::DLL_SUFFIX))
        {
            std::fs::copy(&path, lib.join(&name)).unwrap();
            copied.push(plugin.to_string());
        }
    }
    copied.sort();
    for shipped in ["browser", "notes", "policy", "textkit", "web"] {
        assert!(
            copied.iter().any(|c| c == shipped),
            "{shipped} not built: {copied:?}"
        );
    }
    let (records, err) = plugins_list(&home, &bin.join("toolhost"));
    assert_eq!(bundled_names(&records), copied);
    assert!(!err.contains("warning"), "{err}");
}
