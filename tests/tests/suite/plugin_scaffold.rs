//! `plugins new` + `plugins install` + `call`, from scratch: the scaffold builds and
//! loads as it is.
//!
//! The build shares a cargo target directory with the workspace build
//! (`target/plugin-scaffold`), so abi_stable and friends are compiled once per checkout,
//! not once per run.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;
use toolhost_tests::plugin_fixtures::{isolated, list_json, record, run, run_with_limit};
use toolhost_tests::{TestHome, stderr, stdout, stdout_json, target_dir};

fn scaffold_target_dir() -> PathBuf {
    // target/<profile>/.. = target/
    target_dir()
        .parent()
        .expect("target dir")
        .join("plugin-scaffold")
}

#[test]
fn new_install_call_from_scratch() {
    let home = TestHome::new();
    let work = tempfile::tempdir().unwrap();
    let out = run(
        isolated(&home),
        &[
            "plugins",
            "new",
            "hello-plugin",
            "--path",
            work.path().to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let crate_dir = work.path().join("hello-plugin");
    assert!(crate_dir.join("plugin.toml").is_file());

    let mut cmd = isolated(&home);
    cmd.env("CARGO_TARGET_DIR", scaffold_target_dir());
    let out = run_with_limit(
        cmd,
        &["plugins", "install", crate_dir.to_str().unwrap(), "--debug"],
        None,
        Duration::from_secs(1200),
    );
    assert!(
        out.status.success(),
        "install failed:\n{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(
        stdout(&out).starts_with("installed hello-plugin 0.1.0 into "),
        "{}",
        stdout(&out)
    );
    let installed = home.path().join("plugins/hello-plugin");
    assert!(installed.join("plugin.toml").is_file());
    // Nothing half-written is left behind.
    let leftovers: Vec<_> = std::fs::read_dir(home.path().join("plugins"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    let out = run(
        isolated(&home),
        &["call", "hello_plugin_greet", r#"{"name":"Ada"}"#],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout_json(&out), json!({"greeting": "Hello, Ada!"}));
    // Its pre_tool_call hook is live too.
    let out = run(
        isolated(&home),
        &["call", "hello_plugin_greet", r#"{"name":"nobody"}"#],
    );
    assert_eq!(
        stdout_json(&out),
        json!({"error": "hello_plugin will not greet nobody"})
    );
    let records = list_json(isolated(&home));
    let rec = record(&records, "hello-plugin", Some("user"));
    assert_eq!(rec["hooks"], json!(["pre_tool_call", "post_tool_call"]));

    // Installing again replaces it in place.
    let mut cmd = isolated(&home);
    cmd.env("CARGO_TARGET_DIR", scaffold_target_dir());
    let out = run_with_limit(
        cmd,
        &["plugins", "install", crate_dir.to_str().unwrap(), "--debug"],
        None,
        Duration::from_secs(600),
    );
    assert!(
        stdout(&out).starts_with("replaced hello-plugin"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn install_a_built_library_with_its_embedded_manifest() {
    // A bundled library carries its manifest: installing the file alone works.
    let home = TestHome::new();
    let lib = toolhost_tests::plugin_fixtures::fixture_library("toolhost_plugin_textkit");
    let out = run(
        isolated(&home),
        &["plugins", "install", lib.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let dir = home.path().join("plugins/textkit");
    let manifest = std::fs::read_to_string(dir.join("plugin.toml")).unwrap();
    assert!(manifest.contains("name = \"textkit\""), "{manifest}");
    assert!(dir.join(lib.file_name().unwrap()).is_file());
    let out = run(
        isolated(&home),
        &["call", "base64", r#"{"mode":"decode","text":"aGk="}"#],
    );
    assert_eq!(stdout_json(&out), json!({"text": "hi"}), "{}", stderr(&out));
}

#[test]
fn install_refuses_a_truncated_library_and_changes_nothing() {
    let home = TestHome::new();
    let src = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(toolhost_tests::plugin_fixtures::fixture_library(
        "fixture_good",
    ))
    .unwrap();
    std::fs::write(src.path().join("libfixture_good.so"), &bytes[..8192]).unwrap();
    toolhost_tests::plugin_fixtures::write_manifest(src.path(), "good", "fixture_good", "^0.1", "");
    let out = run(
        isolated(&home),
        &["plugins", "install", src.path().to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("file truncated"), "{}", stderr(&out));
    assert!(!home.path().join("plugins/good").exists());
}
