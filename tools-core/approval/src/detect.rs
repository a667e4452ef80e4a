//! The detector's entry point and its fail-closed edges.
//!
//! - Text longer than [`MAX_COMMAND_BYTES`] is not analysed: hardline
//!   (`hardline.too_large`), because padding must never smuggle a command past the floor.
//! - Text the shell parser rejects (unbalanced quotes, stray `fi`, ...) is reported as
//!   `parse.unparseable` (dangerous, approvable) and still analysed as far as possible: first
//!   with common repairs (closing a quote, a parenthesis, a backtick), then line by line,
//!   and always with a crude split on shell operators whose words go through the same
//!   rules — so `rm -rf / ; echo "` still hits the hardline floor.
//! - A panic inside the parser (it has a few `unwrap`s on odd input) is caught; the
//!   command is then judged by the crude split alone, plus `parse.unparseable`.

use std::borrow::Cow;
use std::panic::{AssertUnwindSafe, catch_unwind};

use super::analyze::Analyzer;
use super::downloads::Downloads;
use super::model::{Arg, Cmd, Placement, Source};
use super::rules;
use super::shell;
use super::verdict::{Finding, Verdict};

/// Commands longer than this (bytes) are blocked unanalysed.
pub const MAX_COMMAND_BYTES: usize = 1 << 20;

/// Judge one command.
pub fn detect(command: &str) -> Verdict {
    analyze(command, false).0
}

/// Judge one command with the full shell parser only (no fast path). For benchmarks and
/// differential tests; the verdict is always the same as [`detect`]'s.
#[doc(hidden)]
pub fn detect_full_parser(command: &str) -> Verdict {
    analyze(command, true).0
}

/// Judge one command of a task whose earlier commands downloaded `earlier` (paths as
/// [`Downloads::fetched`] gave them): running one of those is `exec.run_downloaded`.
/// Also returns what this command downloads, for the task's next commands.
pub fn detect_in_task(command: &str, earlier: &[String]) -> (Verdict, Downloads) {
    let (verdict, _, downloads) = analyze_seeded(command, false, earlier);
    (verdict, downloads)
}

/// Judge one command; `full_parser` bypasses the fast path. Returns the verdict and whether
/// the fast path read it.
pub(crate) fn analyze(command: &str, full_parser: bool) -> (Verdict, bool) {
    let (verdict, fast, _) = analyze_seeded(command, full_parser, &[]);
    (verdict, fast)
}

fn analyze_seeded(
    command: &str,
    full_parser: bool,
    earlier: &[String],
) -> (Verdict, bool, Downloads) {
    if command.len() > MAX_COMMAND_BYTES {
        return (
            Verdict::from_findings(vec![Finding::new(&rules::TOO_LARGE)]),
            false,
            Downloads::default(),
        );
    }
    let run = catch_unwind(AssertUnwindSafe(|| {
        let mut az = Analyzer::new();
        az.force_full_parser = full_parser;
        az.earlier_downloads = earlier.to_vec();
        az.script(command);
        let downloads = az.downloads();
        (az.findings, az.used_fast_path, downloads)
    }));
    match run {
        Ok((findings, fast, downloads)) => (Verdict::from_findings(findings), fast, downloads),
        Err(_) => {
            let mut az = Analyzer::new();
            az.earlier_downloads = earlier.to_vec();
            az.flag_rule(&rules::UNPARSEABLE);
            // The crude split never calls the parser at depth 0, but payloads it finds
            // might; guard again.
            let _ = catch_unwind(AssertUnwindSafe(|| crude_split(&mut az, command)));
            let downloads = az.downloads();
            (Verdict::from_findings(az.findings), false, downloads)
        }
    }
}

/// Every command line in `command` as it runs, each wrapper level separately, with the
/// executable's path reduced to its name (`/usr/bin/sudo rm -rf x` gives `sudo rm -rf x`
/// and `rm -rf x`). Deny rules are matched against these.
pub(crate) fn command_lines(command: &str) -> Vec<String> {
    let run = catch_unwind(AssertUnwindSafe(|| {
        let mut az = Analyzer::new();
        az.lines = Some(Vec::new());
        az.script(command);
        az.lines.unwrap_or_default()
    }));
    run.unwrap_or_default()
}

/// Called by the shell front-end when `text` does not parse.
pub(crate) fn unparseable(az: &mut Analyzer, text: &str) -> Source {
    az.flag_rule(&rules::UNPARSEABLE);
    let mut repaired = false;
    for suffix in [
        "\"", "'", ")", "`", "'\"", "\"'", "}", "))", "\nfi", "\ndone", "\nesac",
    ] {
        let candidate = format!("{text}{suffix}");
        if let Ok(program) = shell::parse(&candidate) {
            shell::program_source(az, &program);
            repaired = true;
            break;
        }
    }
    if !repaired {
        for line in text.lines() {
            if let Ok(program) = shell::parse(line) {
                shell::program_source(az, &program);
            }
        }
    }
    crude_split(az, text);
    Source::Plain
}

/// Split on shell operators and quotes, ignoring all syntax, and run the rules on each
/// segment's words.
fn crude_split(az: &mut Analyzer, text: &str) {
    let cleaned: String = text
        .chars()
        .filter(|c| !matches!(c, '\'' | '"' | '\\'))
        .collect();
    for segment in cleaned.split(['\n', ';', '&', '|', '(', ')', '`', '{', '}']) {
        let segment = segment.trim_start_matches('$');
        let args: Vec<Arg<'_>> = segment
            .split_whitespace()
            .filter(|w| !w.contains('='))
            .map(|w| Arg::literal(Cow::Borrowed(w)))
            .collect();
        if args.is_empty() {
            continue;
        }
        let mut cmd = Cmd {
            args,
            ..Cmd::default()
        };
        // Redirections in crude form: `> target`.
        if let Some(pos) = cmd.args.iter().position(|a| a.as_str().starts_with('>')) {
            let target = cmd.args[pos].as_str().trim_start_matches('>').to_string();
            let target = if target.is_empty() {
                cmd.args.get(pos + 1).map(|a| a.as_str().to_string())
            } else {
                Some(target)
            };
            if let Some(target) = target {
                cmd.writes.push(Arg::literal(target));
            }
            cmd.args.truncate(pos);
        }
        az.command(&cmd, &Source::Plain, Placement::default());
    }
}
