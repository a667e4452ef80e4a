//! Schedules: what Hermes accepts (table and property tests), next runs, grace.

use jiff::Timestamp;
use jiff::tz::TimeZone;
use proptest::prelude::*;

use super::*;

fn now() -> Timestamp {
    "2026-06-01T10:00:00Z".parse().unwrap()
}

fn parse(text: &str) -> Result<Schedule, ScheduleError> {
    Schedule::parse(text, now(), &TimeZone::get("Europe/Paris").unwrap())
}

#[test]
fn every_pattern_compiles() {
    for pattern in [&DURATION, &DATE_PREFIX, &CRON_FIELD] {
        assert!(pattern.check().is_ok(), "{pattern:?}");
    }
}

#[test]
fn every_form_hermes_accepts() {
    let cases: &[(&str, Schedule)] = &[
        (
            "30m",
            Schedule::Once {
                run_at: "2026-06-01T12:30:00+02:00".into(),
                display: "once in 30m".into(),
            },
        ),
        (
            "2 hours",
            Schedule::Once {
                run_at: "2026-06-01T14:00:00+02:00".into(),
                display: "once in 2 hours".into(),
            },
        ),
        (
            "every 30m",
            Schedule::Interval {
                minutes: 30,
                display: "every 30m".into(),
            },
        ),
        (
            "Every 2h",
            Schedule::Interval {
                minutes: 120,
                display: "every 120m".into(),
            },
        ),
        (
            "every 1 day",
            Schedule::Interval {
                minutes: 1440,
                display: "every 1440m".into(),
            },
        ),
        (
            "0 9 * * *",
            Schedule::Cron {
                expr: "0 9 * * *".into(),
                display: "0 9 * * *".into(),
            },
        ),
        (
            "2026-06-02T09:00",
            Schedule::Once {
                run_at: "2026-06-02T09:00:00+02:00".into(),
                display: "once at 2026-06-02 09:00".into(),
            },
        ),
        (
            "2026-06-02 09:00:00",
            Schedule::Once {
                run_at: "2026-06-02T09:00:00+02:00".into(),
                display: "once at 2026-06-02 09:00".into(),
            },
        ),
        (
            "2026-06-02T09:00:00Z",
            Schedule::Once {
                run_at: "2026-06-02T11:00:00+02:00".into(),
                display: "once at 2026-06-02 11:00".into(),
            },
        ),
        (
            "2026-06-02T09:00:00+05:30",
            Schedule::Once {
                run_at: "2026-06-02T05:30:00+02:00".into(),
                display: "once at 2026-06-02 05:30".into(),
            },
        ),
        (
            "2026-06-03",
            Schedule::Once {
                run_at: "2026-06-03T00:00:00+02:00".into(),
                display: "once at 2026-06-03 00:00".into(),
            },
        ),
    ];
    for (text, want) in cases {
        assert_eq!(&parse(text).unwrap(), want, "{text}");
    }
}

#[test]
fn refusals_name_the_problem() {
    let cases = [
        ("every 0m", "Invalid duration"),
        ("every fortnight", "Invalid duration"),
        ("61 * * * *", "Invalid cron expression"),
        ("2026-13-01T09:00", "Invalid timestamp"),
        ("tomorrow at noon", "Invalid schedule"),
        ("", "Invalid schedule"),
    ];
    for (text, want) in cases {
        let err = parse(text).unwrap_err().to_string();
        assert!(err.contains(want), "{text}: {err}");
    }
}

#[test]
fn next_runs_and_the_one_shot_grace() {
    let tz = TimeZone::UTC;
    let once = Schedule::Once {
        run_at: "2026-06-01T09:59:00+00:00".into(),
        display: String::new(),
    };
    assert!(
        once.next_run(now(), None, &tz).is_some(),
        "60 s late is within grace"
    );
    let late = Schedule::Once {
        run_at: "2026-06-01T09:57:00+00:00".into(),
        display: String::new(),
    };
    assert_eq!(
        late.next_run(now(), None, &tz),
        None,
        "3 minutes late is not"
    );
    assert_eq!(
        once.next_run(now(), Some(now()), &tz),
        None,
        "a one-shot runs once"
    );
    let every = Schedule::Interval {
        minutes: 30,
        display: String::new(),
    };
    let last: Timestamp = "2026-06-01T09:45:00Z".parse().unwrap();
    assert_eq!(
        every.next_run(now(), Some(last), &tz).unwrap().to_string(),
        "2026-06-01T10:15:00Z"
    );
}

#[test]
fn grace_is_half_the_period_within_bounds() {
    let tz = TimeZone::UTC;
    let g = |s: &str| parse(s).unwrap().grace_seconds(now(), &tz);
    assert_eq!(g("every 1m"), 120);
    assert_eq!(g("every 1h"), 1800);
    assert_eq!(g("0 9 * * *"), 7200);
    assert_eq!(g("*/10 * * * *"), 300);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,40}") {
        let _ = parse(&text);
    }

    #[test]
    fn durations_round_trip(n in 1u64..100_000, unit in prop::sample::select(vec!["m", "min", "minutes", "h", "hr", "hours", "d", "day", "days"])) {
        let minutes = parse_duration(&format!("{n}{unit}")).unwrap();
        let factor = match unit.as_bytes()[0] { b'h' => 60, b'd' => 1440, _ => 1 };
        prop_assert_eq!(minutes, n * factor);
        let every = parse(&format!("every {n} {unit}")).unwrap();
        prop_assert_eq!(every, Schedule::Interval { minutes: n * factor, display: format!("every {}m", n * factor) });
    }

    #[test]
    fn timestamps_round_trip_through_storage(secs in 1_700_000_000i64..2_000_000_000i64) {
        let tz = TimeZone::get("America/New_York").unwrap();
        let t = Timestamp::from_second(secs).unwrap();
        let stored = format_ts(t, &tz);
        prop_assert_eq!(parse_ts(&stored, &tz), Some(t));
        let once = Schedule::parse(&stored, t, &tz).unwrap();
        prop_assert_eq!(once.next_run(t, None, &tz), Some(t));
    }
}
