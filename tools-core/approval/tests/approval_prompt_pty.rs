//! The interactive approval prompt, driven through a real pseudo-terminal: this test
//! binary re-runs itself (test `prompt_child`) inside a PTY whose slave is the child's
//! controlling terminal, types keys into the master and reads what the child decided.
#![cfg(unix)]
// Test code: starts toolhost, fixtures and helper programs directly (exec_policy.rs).
#![allow(clippy::disallowed_methods)]
// Test helpers outside #[test] functions: failing loudly is their job.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use toolhost_approval::{ApprovalRequest, ask_on_terminal};

const CHILD_ENV: &str = "TOOLHOST_PROMPT_PTY_CHILD";

/// Runs only inside the PTY (spawned by the tests below): prompts and prints the choice.
#[test]
fn prompt_child() {
    let Ok(timeout) = std::env::var(CHILD_ENV) else {
        return;
    };
    let request = ApprovalRequest {
        command: "rm -rf build  # token [REDACTED]".into(),
        description: "recursive delete".into(),
        rule_keys: vec!["fs.recursive_delete".into()],
        session_key: "s".into(),
        tool_call_id: "call_1".into(),
        allow_always: true,
        smart_denied: false,
    };
    let secs: u64 = timeout.parse().unwrap_or(60);
    let choice = ask_on_terminal(&request, Duration::from_secs(secs));
    let name = choice.as_ref().map_or("none", |c| c.as_str());
    println!("\nCHOICE={name}");
}

struct Session {
    screen: Arc<Mutex<String>>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
}

fn start(timeout_secs: u64) -> Session {
    let pty = native_pty_system()
        .openpty(PtySize {
            rows: 40,
            cols: 120,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("openpty");
    let mut cmd = CommandBuilder::new(std::env::current_exe().expect("current_exe"));
    cmd.args(["--exact", "prompt_child", "--nocapture", "--test-threads=1"]);
    cmd.env(CHILD_ENV, timeout_secs.to_string());
    let child = pty.slave.spawn_command(cmd).expect("spawn in pty");
    drop(pty.slave);
    let mut reader = pty.master.try_clone_reader().expect("reader");
    let writer = pty.master.take_writer().expect("writer");
    let screen = Arc::new(Mutex::new(String::new()));
    let sink = Arc::clone(&screen);
    std::thread::spawn(move || {
        let _master = pty.master;
        let mut buf = [0u8; 1024];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    Session {
        screen,
        writer,
        child,
    }
}

impl Session {
    fn wait_for(&self, needle: &str, limit: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < limit {
            if self.screen.lock().unwrap().contains(needle) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    fn type_keys(&mut self, keys: &[u8]) {
        assert!(
            self.wait_for("Choice [o/s/a/D]", Duration::from_secs(60)),
            "no prompt: {}",
            self.screen.lock().unwrap()
        );
        self.writer.write_all(keys).unwrap();
        self.writer.flush().unwrap();
    }

    /// The child's decision and the whole screen.
    fn finish(mut self) -> (String, String) {
        let found = self.wait_for("CHOICE=", Duration::from_secs(60));
        let _ = self.child.wait();
        let screen = self.screen.lock().unwrap().clone();
        assert!(found, "child printed no choice: {screen}");
        let choice = screen
            .split("CHOICE=")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_default()
            .to_string();
        (choice, screen)
    }
}

fn answer(keys: &[u8]) -> (String, String) {
    let mut session = start(60);
    session.type_keys(keys);
    session.finish()
}

#[test]
fn shows_the_redacted_command_and_the_options() {
    let (_, screen) = answer(b"d\r");
    assert!(
        screen.contains("DANGEROUS COMMAND: recursive delete"),
        "{screen}"
    );
    assert!(screen.contains("rm -rf build"), "{screen}");
    assert!(
        screen.contains("[o]nce  |  [s]ession  |  [a]lways  |  [d]eny"),
        "{screen}"
    );
}

#[test]
fn o_approves_once() {
    assert_eq!(answer(b"o\r").0, "once");
}

#[test]
fn session_word_approves_for_the_session() {
    assert_eq!(answer(b"session\r").0, "session");
}

#[test]
fn a_approves_always() {
    assert_eq!(answer(b"a\r").0, "always");
}

#[test]
fn bare_enter_denies() {
    assert_eq!(answer(b"\r").0, "deny");
}

#[test]
fn unknown_input_denies() {
    assert_eq!(answer(b"yes\r").0, "deny");
}

#[test]
fn ctrl_c_denies_without_killing_the_process() {
    let (choice, screen) = answer(b"\x03");
    assert_eq!(choice, "deny", "{screen}");
}

#[test]
fn ctrl_d_denies() {
    assert_eq!(answer(b"\x04").0, "deny");
}

#[test]
fn backspace_edits_the_answer() {
    assert_eq!(answer(b"x\x7fo\r").0, "once");
}

#[test]
fn timeout_denies() {
    let session = start(1);
    assert!(session.wait_for("Choice [", Duration::from_secs(60)));
    let (choice, screen) = session.finish();
    assert_eq!(choice, "timeout", "{screen}");
    assert!(screen.contains("Timeout - denying command"), "{screen}");
}
