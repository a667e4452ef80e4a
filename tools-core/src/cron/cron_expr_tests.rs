//! Cron expressions: parsing (table and property tests), next firing, DST edges.

use jiff::civil::DateTime;
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan};
use proptest::prelude::*;

use super::*;

fn ts(text: &str) -> Timestamp {
    text.parse().unwrap()
}

fn next(expr: &str, after: &str, tz: &str) -> String {
    let tz = TimeZone::get(tz).unwrap();
    let t = CronExpr::parse(expr)
        .unwrap()
        .next_after(ts(after), &tz)
        .unwrap();
    t.to_zoned(tz).strftime("%Y-%m-%dT%H:%M%:z").to_string()
}

#[test]
fn parse_refuses_what_croniter_refuses() {
    let bad = [
        ("* * * *", "expected 5 fields"),
        ("60 * * * *", "outside 0-59"),
        ("* 24 * * *", "outside 0-23"),
        ("* * 0 * *", "outside 1-31"),
        ("* * * 13 *", "outside 1-12"),
        ("* * * * 8", "outside 0-7"),
        ("*/0 * * * *", "a step of 0"),
        ("5-1 * * * *", "runs backwards"),
        ("1,,2 * * * *", "an empty list item"),
        ("a * * * *", "is not a number"),
        ("0 0 30 2 *", "never matches"),
    ];
    for (expr, want) in bad {
        let err = CronExpr::parse(expr).unwrap_err().to_string();
        assert!(err.contains(want), "{expr}: {err}");
    }
    for good in [
        "* * * * *",
        "*/15 9-17 * * 1-5",
        "0 0 29 2 *",
        "5/20 * * * 7",
        "0 9 1,15 * *",
    ] {
        assert!(CronExpr::parse(good).is_ok(), "{good}");
    }
}

#[test]
fn next_firing_in_utc() {
    let cases = [
        (
            "0 9 * * *",
            "2026-06-01T08:59:00Z",
            "2026-06-01T09:00+00:00",
        ),
        (
            "0 9 * * *",
            "2026-06-01T09:00:00Z",
            "2026-06-02T09:00+00:00",
        ),
        (
            "*/15 * * * *",
            "2026-06-01T10:07:30Z",
            "2026-06-01T10:15+00:00",
        ),
        (
            "5/20 * * * *",
            "2026-06-01T10:06:00Z",
            "2026-06-01T10:25+00:00",
        ),
        (
            "0 0 * * 0",
            "2026-06-01T00:00:00Z",
            "2026-06-07T00:00+00:00",
        ),
        (
            "0 0 * * 7",
            "2026-06-01T00:00:00Z",
            "2026-06-07T00:00+00:00",
        ),
        (
            "0 0 29 2 *",
            "2026-03-01T00:00:00Z",
            "2028-02-29T00:00+00:00",
        ),
        // Both day fields restricted: either matches (the 13th, or any Friday).
        (
            "0 12 13 * 5",
            "2026-06-01T00:00:00Z",
            "2026-06-05T12:00+00:00",
        ),
    ];
    for (expr, after, want) in cases {
        assert_eq!(next(expr, after, "UTC"), want, "{expr} after {after}");
    }
}

#[test]
fn local_times_follow_the_zone() {
    assert_eq!(
        next("0 9 * * *", "2026-06-01T06:00:00Z", "Europe/Paris"),
        "2026-06-01T09:00+02:00"
    );
    assert_eq!(
        next("0 9 * * *", "2026-12-01T06:00:00Z", "Europe/Paris"),
        "2026-12-01T09:00+01:00"
    );
}

#[test]
fn a_time_skipped_by_spring_forward_fires_after_the_gap() {
    // New York, 2026-03-08: 02:00 EST jumps to 03:00 EDT.
    assert_eq!(
        next("30 2 * * *", "2026-03-08T05:00:00Z", "America/New_York"),
        "2026-03-08T03:30-04:00"
    );
    // The next day is back to normal.
    assert_eq!(
        next("30 2 * * *", "2026-03-08T08:00:00Z", "America/New_York"),
        "2026-03-09T02:30-04:00"
    );
}

#[test]
fn a_time_repeated_by_fall_back_fires_once() {
    // New York, 2026-11-01: 02:00 EDT falls back to 01:00 EST; 01:30 happens twice.
    let first = next("30 1 * * *", "2026-11-01T04:00:00Z", "America/New_York");
    assert_eq!(first, "2026-11-01T01:30-04:00");
    let after_first = "2026-11-01T05:30:00Z"; // = 01:30 EDT
    assert_eq!(
        next("30 1 * * *", after_first, "America/New_York"),
        "2026-11-02T01:30-05:00"
    );
    // An hourly job does not run the repeated hour twice.
    assert_eq!(
        next("*/30 * * * *", "2026-11-01T05:30:00Z", "America/New_York"),
        "2026-11-01T02:00-05:00"
    );
    // Created during the second pass, it still waits for a time after now.
    assert_eq!(
        next("45 1 * * *", "2026-11-01T06:10:00Z", "America/New_York"),
        "2026-11-01T01:45-05:00"
    );
}

fn field(min: u32, max: u32) -> impl Strategy<Value = String> {
    prop_oneof![
        Just("*".to_string()),
        (min..=max).prop_map(|v| v.to_string()),
        (min..=max, min..=max).prop_map(|(a, b)| format!("{}-{}", a.min(b), a.max(b))),
        (1u32..=(max - min + 1)).prop_map(|s| format!("*/{s}")),
        proptest::collection::vec(min..=max, 1..4).prop_map(|v| v
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",")),
    ]
}

fn expr() -> impl Strategy<Value = String> {
    (
        field(0, 59),
        field(0, 23),
        field(1, 28),
        field(1, 12),
        field(0, 7),
    )
        .prop_map(|(a, b, c, d, e)| format!("{a} {b} {c} {d} {e}"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn parsing_arbitrary_text_never_panics(text in "[0-9*/,\\- a-z]{0,40}") {
        let _ = CronExpr::parse(&text);
    }

    #[test]
    fn the_next_firing_matches_and_nothing_earlier_does(
        text in expr(),
        start in 1_750_000_000i64..1_900_000_000i64,
    ) {
        let cron = CronExpr::parse(&text).unwrap();
        let tz = TimeZone::UTC;
        let after = Timestamp::from_second(start).unwrap();
        let got = cron.next_after(after, &tz).unwrap();
        prop_assert!(got > after);
        let local = got.to_zoned(tz.clone()).datetime();
        prop_assert!(cron.matches(local), "{text}: {local}");
        // No earlier matching minute (checked up to a day back from the result).
        let mut t: DateTime = local;
        for _ in 0..1440 {
            t = t.checked_sub(1.minute()).unwrap();
            if tz.to_timestamp(t).unwrap() <= after { break; }
            prop_assert!(!cron.matches(t), "{text}: {t} matches before {local}");
        }
    }
}
