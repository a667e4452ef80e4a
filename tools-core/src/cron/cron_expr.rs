//! Five-field cron expressions (`minute hour day-of-month month day-of-week`) and the
//! next time one fires in a time zone.
//!
//! Fields take `*`, numbers, ranges `a-b`, steps `*/n` and `a-b/n`, and comma lists,
//! as Hermes' detector admits (digits and `*-,/` only; no month or weekday names).
//! Day-of-week is 0–7 with both 0 and 7 meaning Sunday. When both day fields are
//! restricted, a day matches if either does (Vixie cron and croniter).
//!
//! Times are local wall-clock times in the job's time zone. Around DST changes: a
//! local time skipped by a spring-forward gap fires at the same offset after the gap
//! (02:30 becomes 03:30); a local time repeated by a fall-back fold fires once, at its
//! first occurrence (docs/hermes/cron.md).

use jiff::civil::{Date, DateTime, Time};
use jiff::tz::{AmbiguousOffset, TimeZone};
use jiff::{Timestamp, ToSpan};

/// How far ahead [`CronExpr::next_after`] searches (years): far enough for
/// `0 0 29 2 1` (Feb 29 on a Monday, every 28 years at worst).
const SEARCH_YEARS: i16 = 30;

/// Why an expression was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CronExprError {
    /// Not five fields.
    #[error("expected 5 fields (minute hour day month weekday), got {0}")]
    FieldCount(usize),
    /// A field is malformed.
    #[error("bad {field} field '{text}': {reason}")]
    Field {
        /// Which field.
        field: &'static str,
        /// Its text.
        text: String,
        /// What is wrong.
        reason: String,
    },
    /// The expression never matches a real date (`0 0 30 2 *`).
    #[error("it never matches a real date")]
    Never,
}

/// One field's allowed values as a bit set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Field {
    bits: u64,
    /// The field was `*` (or `*/1`): matters for the day-of-month / weekday rule.
    star: bool,
}

impl Field {
    fn has(self, value: u32) -> bool {
        value < 64 && self.bits & (1u64 << value) != 0
    }
}

/// A parsed cron expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CronExpr {
    minute: Field,
    hour: Field,
    day: Field,
    month: Field,
    weekday: Field,
}

struct FieldSpec {
    name: &'static str,
    min: u32,
    max: u32,
}

const SPECS: [FieldSpec; 5] = [
    FieldSpec {
        name: "minute",
        min: 0,
        max: 59,
    },
    FieldSpec {
        name: "hour",
        min: 0,
        max: 23,
    },
    FieldSpec {
        name: "day-of-month",
        min: 1,
        max: 31,
    },
    FieldSpec {
        name: "month",
        min: 1,
        max: 12,
    },
    FieldSpec {
        name: "day-of-week",
        min: 0,
        max: 7,
    },
];

fn number(text: &str, spec: &FieldSpec) -> Result<u32, String> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("'{text}' is not a number"));
    }
    let value: u32 = text
        .parse()
        .map_err(|_| format!("'{text}' is out of range"))?;
    if value < spec.min || value > spec.max {
        return Err(format!("{value} is outside {}-{}", spec.min, spec.max));
    }
    Ok(value)
}

fn parse_part(part: &str, spec: &FieldSpec) -> Result<(u64, bool), String> {
    let (range, step) = match part.split_once('/') {
        Some((range, step)) => {
            if step.is_empty() || !step.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!("step '{step}' is not a number"));
            }
            let step: u32 = step
                .parse()
                .map_err(|_| format!("step '{step}' is too big"))?;
            if step == 0 {
                return Err("a step of 0".into());
            }
            (range, step)
        }
        None => (part, 1),
    };
    let (lo, hi, star) = if range == "*" {
        (spec.min, spec.max, step == 1)
    } else if let Some((a, b)) = range.split_once('-') {
        let (a, b) = (number(a, spec)?, number(b, spec)?);
        if a > b {
            return Err(format!("range {a}-{b} runs backwards"));
        }
        (a, b, false)
    } else {
        let a = number(range, spec)?;
        // `5/15` means 5, 20, 35, 50 (croniter): from the value to the maximum.
        (a, if part.contains('/') { spec.max } else { a }, false)
    };
    let mut bits = 0u64;
    let mut v = lo;
    while v <= hi {
        bits |= 1u64 << v;
        v = v.saturating_add(step);
    }
    Ok((bits, star))
}

fn parse_field(text: &str, spec: &FieldSpec) -> Result<Field, CronExprError> {
    let fail = |reason: String| CronExprError::Field {
        field: spec.name,
        text: text.to_string(),
        reason,
    };
    let mut field = Field {
        bits: 0,
        star: false,
    };
    for part in text.split(',') {
        if part.is_empty() {
            return Err(fail("an empty list item".into()));
        }
        let (bits, star) = parse_part(part, spec).map_err(fail)?;
        field.bits |= bits;
        field.star |= star;
    }
    Ok(field)
}

impl CronExpr {
    /// Parse a five-field expression (fields separated by whitespace).
    pub fn parse(text: &str) -> Result<Self, CronExprError> {
        let fields: Vec<&str> = text.split_whitespace().collect();
        if fields.len() != 5 {
            return Err(CronExprError::FieldCount(fields.len()));
        }
        let mut parsed = [Field {
            bits: 0,
            star: false,
        }; 5];
        for (i, (text, spec)) in fields.iter().zip(SPECS.iter()).enumerate() {
            parsed[i] = parse_field(text, spec)?;
        }
        let [minute, hour, day, month, mut weekday] = parsed;
        if weekday.has(7) {
            weekday.bits |= 1;
        }
        let expr = CronExpr {
            minute,
            hour,
            day,
            month,
            weekday,
        };
        if !expr.any_real_day() {
            return Err(CronExprError::Never);
        }
        Ok(expr)
    }

    /// Whether some month allows some of the listed days (`30 2` never happens).
    fn any_real_day(&self) -> bool {
        if !self.weekday.star && !self.day.star {
            return true; // the weekday alone matches any month
        }
        if !self.day.star {
            let longest = |m: u32| match m {
                2 => 29,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            };
            return (1..=12)
                .filter(|&m| self.month.has(m))
                .any(|m| (1..=longest(m)).any(|d| self.day.has(d)));
        }
        true
    }

    /// Whether `date` is a day the expression fires on.
    fn day_matches(&self, date: Date) -> bool {
        if !self.month.has(date.month().unsigned_abs().into()) {
            return false;
        }
        let dom = self.day.has(date.day().unsigned_abs().into());
        let dow = self
            .weekday
            .has(date.weekday().to_sunday_zero_offset().unsigned_abs().into());
        match (self.day.star, self.weekday.star) {
            (true, true) => true,
            (true, false) => dow,
            (false, true) => dom,
            (false, false) => dom || dow,
        }
    }

    /// Whether local time `civil` (to the minute) is a firing time.
    pub fn matches(&self, civil: DateTime) -> bool {
        civil.second() == 0
            && civil.subsec_nanosecond() == 0
            && self.day_matches(civil.date())
            && self.hour.has(civil.hour().unsigned_abs().into())
            && self.minute.has(civil.minute().unsigned_abs().into())
    }

    /// The matching times of one day, in order.
    fn times(&self) -> impl Iterator<Item = Time> + '_ {
        (0..24u8)
            .filter(|&h| self.hour.has(h.into()))
            .flat_map(move |h| {
                (0..60u8)
                    .filter(|&m| self.minute.has(m.into()))
                    .filter_map(move |m| Time::new(h as i8, m as i8, 0, 0).ok())
            })
    }

    /// The first firing strictly after `after`, in `tz`; `None` when nothing matches
    /// within the search horizon.
    pub fn next_after(&self, after: Timestamp, tz: &TimeZone) -> Option<Timestamp> {
        let local = after.to_zoned(tz.clone()).datetime();
        let start_day = local.date();
        let end_year = start_day.year().saturating_add(SEARCH_YEARS);
        let mut day = start_day;
        while day.year() <= end_year {
            if self.day_matches(day) {
                for time in self.times() {
                    let civil = DateTime::from_parts(day, time);
                    if civil <= local {
                        continue;
                    }
                    if let Some(instant) = resolve(civil, tz, after) {
                        return Some(instant);
                    }
                }
            }
            day = day.checked_add(1.day()).ok()?;
        }
        None
    }
}

/// The instant of local time `civil` in `tz` that is after `after`: a time in a gap
/// at the offset before the gap (so after it), a time in a fold at its first
/// occurrence unless `after` is already past that (then its second).
fn resolve(civil: DateTime, tz: &TimeZone, after: Timestamp) -> Option<Timestamp> {
    let candidates = match tz.to_ambiguous_timestamp(civil).offset() {
        AmbiguousOffset::Unambiguous { offset } => [Some(offset), None],
        AmbiguousOffset::Gap { before, .. } => [Some(before), None],
        AmbiguousOffset::Fold { before, after } => [Some(before), Some(after)],
    };
    candidates
        .into_iter()
        .flatten()
        .filter_map(|offset| offset.to_timestamp(civil).ok())
        .find(|t| *t > after)
}

#[cfg(test)]
#[path = "cron_expr_tests.rs"]
mod tests;
