//! One fixture per load failure. For each: the host starts, a good plugin's tool still
//! works, the failure is one line on stderr naming plugin, source and cause, and
//! `plugins list` shows it failed.

use std::path::Path;

use toolhost_tests::plugin_fixtures::{
    add_plugin, fixture_library, isolated, list_json, record, run, write_manifest,
};
use toolhost_tests::{TestHome, stderr, stdout, stdout_json};

/// Set up the good plugin plus whatever `setup` adds to the user plugin directory, then
/// check everything README's "Native plugins" promises for a plugin `name` failing with
/// `cause`.
fn assert_isolated_failure(setup: impl FnOnce(&Path), name: &str, cause: &str) {
    let home = TestHome::new();
    let plugins = home.path().join("plugins");
    add_plugin(&plugins, "good", "fixture_good", "");
    setup(&plugins);

    let out = run(
        isolated(&home),
        &["call", "good_echo", r#"{"text":"still here"}"#],
    );
    assert!(
        out.status.success(),
        "good call failed: {}\n{}",
        stdout(&out),
        stderr(&out)
    );
    assert_eq!(stdout_json(&out)["echo"]["text"], "still here");
    let err = stderr(&out);
    let prefix = format!("toolhost: plugin {name} (user, ");
    let line = err
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no failure line for {name} on stderr:\n{err}"));
    assert!(line.contains(cause), "{line:?} does not name {cause:?}");

    let records = list_json(isolated(&home));
    assert_eq!(record(&records, "good", None)["status"], "loaded");
    let failed = record(&records, name, None);
    assert_eq!(failed["status"], "failed", "{failed:#}");
    assert!(
        failed["reason"]
            .as_str()
            .unwrap_or_default()
            .contains(cause),
        "{failed:#}"
    );
}

#[test]
fn register_that_panics() {
    assert_isolated_failure(
        |p| {
            add_plugin(p, "regpanic", "fixture_register_panics", "");
        },
        "regpanic",
        "register panicked: register exploded",
    );
}

#[test]
fn built_against_an_older_plugin_api() {
    // The manifest claims ^0.1; the library says otherwise and abi_stable refuses it.
    assert_isolated_failure(
        |p| {
            add_plugin(p, "oldapi", "fixture_old_api", "");
        },
        "oldapi",
        "expected plugin-api ^0.1, plugin built for 0.0.9",
    );
}

#[test]
fn built_against_a_changed_layout() {
    assert_isolated_failure(
        |p| {
            add_plugin(p, "changed", "fixture_changed_abi", "");
        },
        "changed",
        "incompatible plugin-api layout: mismatched type (expected u8, found u32)",
    );
}

#[test]
fn an_ordinary_shared_library() {
    assert_isolated_failure(
        |p| {
            add_plugin(p, "ordinary", "fixture_not_a_plugin", "");
        },
        "ordinary",
        "not a toolhost plugin",
    );
}

#[test]
fn an_ordinary_library_dropped_loose() {
    // A library alone in a plugin directory must describe itself; this one cannot.
    let source = fixture_library("fixture_not_a_plugin");
    let file = source.file_name().unwrap().to_owned();
    assert_isolated_failure(
        |p| {
            std::fs::copy(&source, p.join(&file)).unwrap();
        },
        "fixture_not_a_plugin",
        "not a toolhost plugin (no embedded manifest)",
    );
}

#[test]
fn truncated_libraries() {
    let bytes = std::fs::read(fixture_library("fixture_good")).unwrap();
    for (name, cut) in [
        ("cut4k", 4096),
        ("cut100k", 100 * 1024),
        ("cuthalf", bytes.len() / 2),
    ] {
        assert_isolated_failure(
            |p| {
                let dir = p.join(name);
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(dir.join("libtrunc.so"), &bytes[..cut]).unwrap();
                write_manifest(&dir, name, "libtrunc.so", "^0.1", "");
            },
            name,
            "file truncated",
        );
    }
}

#[test]
fn a_text_file_named_like_a_library() {
    assert_isolated_failure(
        |p| {
            let dir = p.join("text");
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("libtext.so"), "I am not a library\n").unwrap();
            write_manifest(&dir, "text", "libtext.so", "^0.1", "");
        },
        "text",
        "not a shared library (no ELF header)",
    );
}

#[test]
fn missing_plugin_toml() {
    assert_isolated_failure(
        |p| {
            let dir = p.join("nomanifest");
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::copy(fixture_library("fixture_good"), dir.join("libx.so")).unwrap();
        },
        "nomanifest",
        "missing plugin.toml",
    );
}

#[test]
fn malformed_plugin_toml() {
    assert_isolated_failure(
        |p| {
            let dir = add_plugin(p, "badtoml", "fixture_good", "");
            std::fs::write(dir.join("plugin.toml"), "name = \"badtoml\"\nversion = [\n").unwrap();
        },
        "badtoml",
        "malformed plugin.toml: line 2",
    );
}

#[test]
fn plugin_toml_missing_a_key() {
    assert_isolated_failure(
        |p| {
            let dir = add_plugin(p, "noapi", "fixture_good", "");
            std::fs::write(
                dir.join("plugin.toml"),
                "name = \"noapi\"\nversion = \"1.0.0\"\nlibrary = \"fixture_good\"\n",
            )
            .unwrap();
        },
        "noapi",
        "plugin.toml: missing `api`",
    );
}

#[test]
fn semver_mismatch_in_the_manifest() {
    assert_isolated_failure(
        |p| {
            let dir = add_plugin(p, "future", "fixture_good", "");
            let lib = fixture_library("fixture_good");
            let file = lib.file_name().unwrap().to_string_lossy().into_owned();
            write_manifest(&dir, "future", &file, "^0.2", "");
        },
        "future",
        "expected plugin-api ^0.1, plugin built for 0.2",
    );
}

#[test]
fn the_same_library_file_under_two_names_loads_once() {
    assert_isolated_failure(
        |p| {
            // `twin` points at good's own file: loading it again would run register twice.
            let good_lib = std::fs::read_dir(p.join("good"))
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|path| path.extension().is_some_and(|e| e == "so"))
                .unwrap();
            let dir = p.join("twin");
            std::fs::create_dir_all(&dir).unwrap();
            std::os::unix::fs::symlink(&good_lib, dir.join("libtwin.so")).unwrap();
            write_manifest(&dir, "twin", "libtwin.so", "^0.1", "");
        },
        "twin",
        "the same library file is already loaded as plugin good",
    );
}

#[test]
fn doctor_prints_the_full_report_and_exits_1() {
    let home = TestHome::new();
    let plugins = home.path().join("plugins");
    add_plugin(&plugins, "good", "fixture_good", "");
    add_plugin(&plugins, "changed", "fixture_changed_abi", "");
    let out = run(isolated(&home), &["plugins", "doctor"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("ok   good (user"), "{text}");
    assert!(text.contains("FAIL changed (user"), "{text}");
    // abi_stable's own report, not just the summary.
    assert!(text.contains("Layout of expected type"), "{text}");
    assert!(text.contains("1 loaded, 0 disabled, 1 failed"), "{text}");
}
