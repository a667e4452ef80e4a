//! Scheduled jobs end to end: jobs made with the `cronjob` tool through the binary,
//! run by `toolhost cron tick` / `daemon` through the agent loop against the scripted
//! OpenAI-compatible server (real HTTP), with the run history read back by
//! `toolhost cron runs`.

use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolhost::agent::scripted::{self, Reply, ScriptedServer};
use toolhost_tests::{TestHome, stderr, stdout};

const FAR_FUTURE: &str = "2099-01-01T00:00:00Z";

fn home() -> TestHome {
    let home = TestHome::new();
    home.write_config(
        "[model]\nstream = false\nretry_base_delay = 0.01\n\n[cron]\ntimezone = \"UTC\"\n",
    );
    home
}

async fn toolhost(
    home: &TestHome,
    server: &ScriptedServer,
    args: &[&str],
    stdin: Option<&str>,
) -> Output {
    let mut cmd = home.command();
    cmd.env("OPENAI_BASE_URL", server.base_url())
        .env("OPENAI_API_KEY", "sk-cron-test-secret")
        .env("TOOLHOST_MODEL", "scripted");
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let stdin = stdin.map(str::to_string);
    tokio::task::spawn_blocking(move || {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        toolhost_tests::spawn_with_stdin(cmd, &refs, stdin.as_deref())
            .wait_with_output()
            .expect("run toolhost")
    })
    .await
    .expect("join")
}

async fn create(home: &TestHome, server: &ScriptedServer, args: Value) -> String {
    let out = toolhost(
        home,
        server,
        &["call", "cronjob", "-"],
        Some(&args.to_string()),
    )
    .await;
    let r: Value =
        serde_json::from_str(&stdout(&out)).unwrap_or_else(|_| panic!("{}", stderr(&out)));
    assert_eq!(r["success"], true, "{r}");
    r["job_id"].as_str().unwrap().to_string()
}

async fn runs(home: &TestHome, server: &ScriptedServer, job: &str) -> Vec<Value> {
    let out = toolhost(home, server, &["cron", "runs", job, "--json"], None).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_str::<Value>(&stdout(&out))
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tick_runs_a_due_job_through_the_agent_loop_without_approving_anything() {
    let home = home();
    let server = ScriptedServer::start(vec![
        scripted::tool_calls(&[("c1", "terminal", r#"{"command":"rm -rf ~/precious"}"#)]),
        scripted::text("Report: nothing changed."),
    ])
    .await
    .unwrap();
    let id = create(&home, &server, json!({"action": "create", "name": "nightly", "prompt": "Check the disk and report.", "schedule": "every 1h"})).await;

    let out = toolhost(
        &home,
        &server,
        &["cron", "tick", "--now", FAR_FUTURE, "--json"],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["ran"][0]["job_id"], id.as_str(), "{report}");
    assert_eq!(report["ran"][0]["success"], true, "{report}");

    let bodies = server.bodies();
    let offered: Vec<&str> = bodies[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(offered.contains(&"terminal"), "{offered:?}");
    assert!(
        !offered.contains(&"cronjob") && !offered.contains(&"clarify"),
        "{offered:?}"
    );
    let prompt = bodies[0]["messages"][1]["content"].as_str().unwrap();
    assert!(prompt.starts_with("[IMPORTANT: You are running as a scheduled cron job."));
    assert!(prompt.ends_with("Check the disk and report."));
    let tool = bodies[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert!(
        tool["content"].as_str().unwrap().contains("no_human"),
        "{tool}"
    );

    let history = runs(&home, &server, "nightly").await;
    assert_eq!(history.len(), 1);
    assert_eq!(history[0]["status"], "ok");
    assert_eq!(history[0]["response"], "Report: nothing changed.");
    assert!(
        history[0]["output"]
            .as_str()
            .unwrap()
            .contains("## Response")
    );

    // Nothing more is due at the same time.
    let out = toolhost(
        &home,
        &server,
        &["cron", "tick", "--now", FAR_FUTURE, "--json"],
        None,
    )
    .await;
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["ran"], json!([]), "{report}");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_ticks_at_once_run_a_job_once() {
    let home = home();
    let server = ScriptedServer::start(vec![
        Reply::Delay(
            Duration::from_secs(3),
            Box::new(scripted::text("slow answer")),
        ),
        scripted::text("a second run would take this"),
    ])
    .await
    .unwrap();
    let id = create(
        &home,
        &server,
        json!({"action": "create", "prompt": "Summarise.", "schedule": "every 1h"}),
    )
    .await;
    let first = toolhost(&home, &server, &["cron", "tick", "--now", FAR_FUTURE], None);
    let second = async {
        tokio::time::sleep(Duration::from_millis(700)).await;
        toolhost(&home, &server, &["cron", "tick", "--now", FAR_FUTURE], None).await
    };
    let (a, b) = tokio::join!(first, second);
    assert_eq!(a.status.code(), Some(0), "{}", stderr(&a));
    assert_eq!(b.status.code(), Some(0), "{}", stderr(&b));
    assert_eq!(server.requests().len(), 1, "the job ran twice");
    assert_eq!(runs(&home, &server, &id).await.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_daemon_runs_a_due_one_shot_and_stops_on_sigterm() {
    let home = home();
    let server = ScriptedServer::start(vec![scripted::text("Reminder: stand up.")])
        .await
        .unwrap();
    // The binary is built by the first command; take the time only after that. Half a
    // minute ahead: due soon, and still within the one-shot grace if creating is slow.
    let out = toolhost(&home, &server, &["cron", "list"], None).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let soon = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(30);
    let now = soon.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    let id = create(
        &home,
        &server,
        json!({"action": "create", "prompt": "Remind me to stand up.", "schedule": now}),
    )
    .await;

    let mut cmd = home.command();
    cmd.env("OPENAI_BASE_URL", server.base_url())
        .env("TOOLHOST_MODEL", "scripted")
        .args(["cron", "daemon", "--interval", "0.5"]);
    let daemon = toolhost_tests::spawn_with_stdin(cmd, &[], None);
    let started = Instant::now();
    let history = loop {
        let history = runs(&home, &server, &id).await;
        if history.iter().any(|r| r["status"] != "running")
            || started.elapsed() > Duration::from_secs(180)
        {
            break history;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    // SAFETY: kill(2) on the pid of a child this test started and has not reaped.
    unsafe { libc::kill(daemon.id() as i32, libc::SIGTERM) };
    let out = tokio::task::spawn_blocking(move || daemon.wait_with_output().unwrap())
        .await
        .unwrap();
    assert_eq!(history.len(), 1, "{history:?}");
    assert_eq!(history[0]["status"], "ok", "{history:?}");
    assert_eq!(history[0]["response"], "Reminder: stand up.");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cron daemon stopped"),
        "{}",
        stderr(&out)
    );
    // A one-shot is gone once it has run; its history stays.
    let out = toolhost(&home, &server, &["cron", "list", "--json"], None).await;
    assert_eq!(stdout(&out).trim(), "[]");
}
