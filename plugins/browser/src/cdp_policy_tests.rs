//! Tests of `browser_cdp`'s policy without a browser: the allowlist, the download
//! rewrite, URL parameters, and which files may be uploaded.

use std::path::Path;

use serde_json::{Value, json};
use toolhost_netpolicy::Policy;

use crate::cdp_policy::{ALLOWED, Prepared, prepare};
use crate::downloads::{component, forced_behavior};
use crate::error::BrowserError;
use crate::guard::Guard;
use crate::settings::Settings;
use crate::uploads;

fn prepared(settings: &Settings, method: &str, params: Value) -> Result<Prepared, BrowserError> {
    let guard = Guard::new(settings.policy());
    prepare(
        settings,
        &guard,
        Path::new("/home/u/.toolhost/browser_downloads/t"),
        method,
        params,
    )
}

#[test]
fn methods_off_the_allowlist_are_refused_with_method_and_reason() {
    let cases = [
        ("Fetch.disable", "request guard"),
        ("Fetch.continueRequest", "request guard"),
        ("Target.setAutoAttach", "request guard"),
        (
            "Runtime.runIfWaitingForDebugger",
            "before the request guard",
        ),
        ("Target.createBrowserContext", "targets"),
        ("Target.exposeDevToolsProtocol", "targets"),
        ("IO.read", "files"),
        ("Storage.getCookies", "files"),
        ("Browser.close", "browser itself"),
        ("Browser.grantPermissions", "browser itself"),
        ("Security.setIgnoreCertificateErrors", "certificate"),
        ("Network.setRequestInterception", "allowlist"),
        ("Page.setInterceptFileChooserDialog", "allowlist"),
        ("Debugger.enable", "allowlist"),
        ("", "allowlist"),
    ];
    for (method, reason) in cases {
        let err = prepared(&Settings::default(), method, json!({})).unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(err, BrowserError::CdpDenied { .. }),
            "{method}: {text}"
        );
        assert!(text.contains(method), "{text}");
        assert!(text.contains(reason), "{method}: {text}");
    }
}

#[test]
fn allowed_methods_pass_unchanged() {
    for method in [
        "Runtime.evaluate",
        "DOM.getDocument",
        "Target.getTargets",
        "Input.insertText",
    ] {
        assert!(ALLOWED.contains(&method));
        let call = prepared(&Settings::default(), method, json!({ "x": 1 })).unwrap();
        assert_eq!(call.method, method);
        assert_eq!(call.params, json!({ "x": 1 }));
        assert!(!call.browser_level);
    }
}

#[test]
fn the_allowlist_has_no_duplicates_and_no_guard_switches() {
    let mut sorted = ALLOWED.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), ALLOWED.len());
    for method in ALLOWED {
        assert!(!method.starts_with("Fetch."), "{method}");
        assert!(!method.starts_with("IO."), "{method}");
        assert_ne!(method, "Target.setAutoAttach");
        assert_ne!(method, "Runtime.runIfWaitingForDebugger");
    }
}

#[test]
fn download_settings_always_name_the_task_folder() {
    for method in ["Browser.setDownloadBehavior", "Page.setDownloadBehavior"] {
        for asked in ["allow", "default", "allowAndName", "deny", "bogus"] {
            let call = prepared(
                &Settings::default(),
                method,
                json!({ "behavior": asked, "downloadPath": "/etc", "browserContextId": "x" }),
            )
            .unwrap();
            assert_eq!(call.method, "Browser.setDownloadBehavior");
            assert!(call.browser_level);
            assert_eq!(
                call.params["downloadPath"],
                "/home/u/.toolhost/browser_downloads/t"
            );
            assert_eq!(call.params["behavior"], forced_behavior(Some(asked)));
            assert!(call.params.get("browserContextId").is_none());
        }
    }
    assert_eq!(forced_behavior(Some("default")), "allow");
    assert_eq!(forced_behavior(Some("deny")), "deny");
}

#[test]
fn task_ids_become_one_safe_folder_name() {
    let cases = [
        ("t1", "t1"),
        ("", "default"),
        (".", "default"),
        ("..", "default"),
        ("../../etc", ".._.._etc"),
        ("a/b", "a_b"),
        ("tâche", "t_che"),
    ];
    for (task, name) in cases {
        assert_eq!(component(task), name, "{task}");
    }
    assert_eq!(component(&"x".repeat(100)).len(), 64);
}

#[test]
fn url_parameters_obey_the_address_policy() {
    let err = prepared(
        &Settings::default(),
        "Page.navigate",
        json!({ "url": "http://169.254.169.254/" }),
    )
    .unwrap_err();
    assert!(err.to_string().contains("metadata"), "{err}");
    let open = Settings {
        allow_private_networks: true,
        ..Settings::default()
    };
    assert!(
        prepared(
            &open,
            "Page.navigate",
            json!({ "url": "http://127.0.0.1:1/" })
        )
        .is_ok()
    );
    assert!(
        prepared(
            &open,
            "Page.navigate",
            json!({ "url": "file:///etc/passwd" })
        )
        .is_err()
    );
    assert!(Policy::default().parse("http://127.0.0.1/").is_err());
}

#[test]
fn uploads_need_a_list_of_paths() {
    for files in [json!(null), json!("a.txt"), json!([1])] {
        let err = prepared(
            &Settings::default(),
            "DOM.setFileInputFiles",
            json!({ "files": files, "nodeId": 1 }),
        )
        .unwrap_err();
        assert!(err.to_string().contains("list of paths"), "{err}");
    }
}

#[test]
fn secret_files_are_recognised_by_name_extension_and_hidden_directory() {
    let cases = [
        (".env", true),
        (".env.local", true),
        ("prod.env", true),
        (".envrc", true),
        ("config/.npmrc", true),
        (".ssh/id_ed25519", true),
        ("keys/server.pem", true),
        ("keys/server.KEY", true),
        ("id_rsa", true),
        ("gcp/service-account-prod.json", true),
        ("credentials.json", true),
        (".git/config", true),
        ("notes.txt", false),
        ("docs/report.pdf", false),
        ("env/readme.md", false),
    ];
    for (path, secret) in cases {
        assert_eq!(uploads::is_secret(Path::new(path)), secret, "{path}");
    }
}

#[test]
fn uploads_resolve_inside_the_workspace_only() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(workspace.join("sub")).unwrap();
    std::fs::write(workspace.join("sub/ok.txt"), "x").unwrap();
    std::fs::write(workspace.join(".env"), "x").unwrap();
    std::fs::write(dir.path().join("outside.txt"), "x").unwrap();
    std::os::unix::fs::symlink(dir.path().join("outside.txt"), workspace.join("link.txt")).unwrap();
    std::os::unix::fs::symlink(workspace.join(".env"), workspace.join("innocent.txt")).unwrap();
    let settings = Settings {
        upload_dir: Some(workspace.clone()),
        ..Settings::default()
    };
    let ok = uploads::check(&settings, &["sub/ok.txt".into()]).unwrap();
    let real = workspace.canonicalize().unwrap().join("sub/ok.txt");
    assert_eq!(ok, vec![real.to_string_lossy().into_owned()]);
    let refused = [
        (".env", "secret"),
        ("innocent.txt", "secret"),
        ("link.txt", "outside the workspace"),
        ("../outside.txt", "outside the workspace"),
        ("missing.txt", "cannot be read"),
        ("sub", "not a regular file"),
    ];
    for (file, why) in refused {
        let err = uploads::check(&settings, &[file.into()])
            .unwrap_err()
            .to_string();
        assert!(err.contains(why), "{file}: {err}");
    }
    let absolute = dir
        .path()
        .join("outside.txt")
        .to_string_lossy()
        .into_owned();
    assert!(uploads::check(&settings, &[absolute]).is_err());
    assert!(uploads::check(&settings, &["sub/ok.txt".into(), ".env".into()]).is_err());
}
