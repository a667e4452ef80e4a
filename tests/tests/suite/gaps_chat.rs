//! `toolhost chat` in a pipe: the spinner (`host/src/cli/spinner.rs`) draws only on a
//! terminal, so captured output holds no carriage returns or escape codes even while a
//! tool runs long enough for it to have drawn.

use toolhost::agent::scripted::{self, ScriptedServer};
use toolhost_tests::{TestHome, stderr, stdout};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_in_a_pipe_draws_no_spinner() {
    let home = TestHome::new();
    home.write_config("[model]\nstream = false\nretry_base_delay = 0.01\n");
    let server = ScriptedServer::start(vec![
        scripted::tool_calls(&[("c1", "terminal", r#"{"command":"sleep 0.6; echo slept"}"#)]),
        scripted::text("Done sleeping."),
    ])
    .await
    .unwrap();
    let mut cmd = home.command();
    cmd.env("OPENAI_BASE_URL", server.base_url())
        .env("TOOLHOST_MODEL", "scripted")
        .args(["chat", "--toolsets", "terminal"]);
    let out = tokio::task::spawn_blocking(move || {
        toolhost_tests::spawn_with_stdin(cmd, &[], Some("nap\n/exit\n"))
            .wait_with_output()
            .expect("wait toolhost")
    })
    .await
    .expect("join");
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert!(stdout(&out).contains("Done sleeping."), "{}", stdout(&out));
    // The tool really ran (its line is shown), so a spinner would have had time to draw.
    let tool_result = &server.bodies()[1]["messages"];
    assert!(tool_result.to_string().contains("slept"), "{tool_result}");
    for (name, text) in [("stdout", stdout(&out)), ("stderr", stderr(&out))] {
        assert!(
            !text.contains('\r'),
            "{name} has a carriage return: {text:?}"
        );
        assert!(
            !text.contains("\x1b["),
            "{name} has an escape code: {text:?}"
        );
    }
}
