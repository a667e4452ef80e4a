//! The store with an injected clock: due, missed, paused, claims across connections.

use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};

use super::*;
use crate::cron::job::{CronJob, Repeat};
use crate::cron::schedule::Schedule;

pub(crate) fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

pub(crate) fn job(id: &str, schedule: &str, created: Timestamp) -> CronJob {
    let tz = TimeZone::UTC;
    let schedule = Schedule::parse(schedule, created, &tz).unwrap();
    let next = schedule.next_run(created, None, &tz);
    CronJob {
        id: id.into(),
        name: format!("job {id}"),
        prompt: "say hi".into(),
        skills: vec![],
        skill: None,
        model: None,
        provider: None,
        base_url: None,
        script: None,
        script_hash: None,
        no_agent: false,
        context_from: None,
        schedule_display: schedule.display().into(),
        repeat: Repeat {
            times: (!schedule.recurring()).then_some(1),
            completed: 0,
        },
        schedule,
        enabled: true,
        state: "scheduled".into(),
        paused_at: None,
        paused_reason: None,
        created_at: format_ts(created, &tz),
        next_run_at: next.map(|t| format_ts(t, &tz)),
        last_run_at: None,
        last_status: None,
        last_error: None,
        last_delivery_error: None,
        deliver: "local".into(),
        origin: None,
        enabled_toolsets: None,
        workdir: None,
    }
}

fn store(dir: &tempfile::TempDir) -> CronStore {
    CronStore::open(&dir.path().join("cron.db"), TimeZone::UTC, 50).unwrap()
}

const TTL: SignedDuration = SignedDuration::from_secs(600);

fn ok() -> RunResult {
    RunResult {
        success: true,
        response: "done".into(),
        ..RunResult::default()
    }
}

#[test]
fn a_job_is_due_only_at_its_time() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    s.insert(&job("a", "0 9 * * *", at("2026-06-01T08:00:00Z")))
        .unwrap();
    assert!(
        s.claim_due("t", at("2026-06-01T08:59:59Z"), TTL)
            .unwrap()
            .is_empty()
    );
    let due = s.claim_due("t", at("2026-06-01T09:00:30Z"), TTL).unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!(
        s.get("a").unwrap().unwrap().next_run_at.as_deref(),
        Some("2026-06-02T09:00:00+00:00"),
        "claiming advances a recurring job before it runs"
    );
}

#[test]
fn a_claimed_job_is_not_handed_out_twice() {
    let dir = tempfile::tempdir().unwrap();
    let first = store(&dir);
    let second = store(&dir);
    first
        .insert(&job("a", "every 5m", at("2026-06-01T08:00:00Z")))
        .unwrap();
    let now = at("2026-06-01T08:05:00Z");
    assert_eq!(first.claim_due("one", now, TTL).unwrap().len(), 1);
    assert!(second.claim_due("two", now, TTL).unwrap().is_empty());
    assert_eq!(second.claim("a", "two", now, TTL).unwrap(), Claim::Busy);
    // Later, while the first run is still going, the job is still held.
    assert!(
        second
            .claim_due("two", at("2026-06-01T08:10:00Z"), TTL)
            .unwrap()
            .is_empty()
    );
    first
        .finish("a", &ok(), at("2026-06-01T08:06:00Z"))
        .unwrap();
    assert_eq!(
        second
            .claim_due("two", at("2026-06-01T08:11:00Z"), TTL)
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn a_dead_runners_claim_expires() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    s.insert(&job("a", "every 5m", at("2026-06-01T08:00:00Z")))
        .unwrap();
    assert_eq!(
        s.claim_due("dead", at("2026-06-01T08:05:00Z"), TTL)
            .unwrap()
            .len(),
        1
    );
    let after_ttl = at("2026-06-01T08:16:00Z");
    assert_eq!(s.claim_due("alive", after_ttl, TTL).unwrap().len(), 1);
}

#[test]
fn missed_runs_after_downtime_run_once_and_fast_forward() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    s.insert(&job("a", "every 1h", at("2026-06-01T00:00:00Z")))
        .unwrap();
    // Down for a day: 23 runs missed.
    let back = at("2026-06-02T00:30:00Z");
    assert_eq!(s.claim_due("t", back, TTL).unwrap().len(), 1);
    s.finish("a", &ok(), back).unwrap();
    assert!(
        s.claim_due("t", at("2026-06-02T00:31:00Z"), TTL)
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        s.get("a").unwrap().unwrap().next_run_at.as_deref(),
        Some("2026-06-02T01:30:00+00:00")
    );
}

#[test]
fn a_paused_job_never_fires() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    s.insert(&job("a", "every 5m", at("2026-06-01T08:00:00Z")))
        .unwrap();
    s.update("a", |j| {
        j.enabled = false;
        j.state = "paused".into();
        Ok::<(), ()>(())
    })
    .unwrap()
    .unwrap();
    assert!(
        s.claim_due("t", at("2026-06-01T09:00:00Z"), TTL)
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        s.claim("a", "t", at("2026-06-01T09:00:00Z"), TTL).unwrap(),
        Claim::NotRunnable
    );
}

#[test]
fn a_one_shot_runs_once_and_is_removed_keeping_its_history() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    s.insert(&job("a", "30m", at("2026-06-01T08:00:00Z")))
        .unwrap();
    let now = at("2026-06-01T08:30:10Z");
    let due = s.claim_due("t", now, TTL).unwrap();
    assert_eq!(due.len(), 1);
    let run = s.start_run(&due[0], now).unwrap();
    s.finish_run(run, &ok(), now).unwrap();
    s.finish("a", &ok(), now).unwrap();
    assert_eq!(s.get("a").unwrap(), None);
    let runs = s.runs("a", 10).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status, "ok");
    assert_eq!(runs[0].response.as_deref(), Some("done"));
}

#[test]
fn a_one_shot_missed_beyond_its_grace_never_runs() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    let mut j = job("a", "30m", at("2026-06-01T08:00:00Z"));
    j.next_run_at = None;
    s.insert(&j).unwrap();
    assert!(
        s.claim_due("t", at("2026-06-01T09:00:00Z"), TTL)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn history_keeps_the_newest_runs() {
    let dir = tempfile::tempdir().unwrap();
    let s = CronStore::open(&dir.path().join("cron.db"), TimeZone::UTC, 3).unwrap();
    let j = job("a", "every 5m", at("2026-06-01T08:00:00Z"));
    s.insert(&j).unwrap();
    for i in 0..5 {
        let run = s.start_run(&j, at("2026-06-01T08:00:00Z")).unwrap();
        let r = RunResult {
            response: format!("run {i}"),
            ..ok()
        };
        s.finish_run(run, &r, at("2026-06-01T08:01:00Z")).unwrap();
    }
    let runs = s.runs("a", 10).unwrap();
    let texts: Vec<_> = runs.iter().filter_map(|r| r.response.as_deref()).collect();
    assert_eq!(texts, ["run 4", "run 3", "run 2"]);
    assert_eq!(s.latest_response("a").unwrap().as_deref(), Some("run 4"));
}
