//! Output to a closed pipe (`toolhost tools | head`) ends the command quietly with exit
//! code 0, for every command that prints.

use std::process::Stdio;

use toolhost_tests::plugin_fixtures::isolated;
use toolhost_tests::{TestHome, stderr};

#[test]
fn every_printing_command_ends_quietly_when_its_reader_is_gone() {
    let home = TestHome::new();
    let commands: [&[&str]; 7] = [
        &["tools"],
        &["toolsets"],
        &["schema"],
        &["plugins", "list"],
        &["skills", "list"],
        &["approvals", "list", "--rules"],
        &["mcp", "list"],
    ];
    for args in commands {
        // A real pipe whose read end is closed before toolhost writes a byte: every
        // write fails with EPIPE, as after `head` has read its lines.
        let (reader, writer) = std::io::pipe().expect("pipe");
        drop(reader);
        let mut cmd = isolated(&home);
        let out = cmd
            .args(args)
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .expect("run toolhost");
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(
            !err.contains("panicked") && !err.contains("Broken pipe"),
            "{args:?}: {err}"
        );
    }
}
