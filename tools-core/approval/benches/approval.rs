//! Dangerous-command detector speed over Hermes' own benchmark mix, with Hermes measured in
//! the same run.
//!
//! Corpus: `benches/data/danger-corpus.txt` (10 000 commands, ~90 % everyday / ~10 %
//! dangerous), written by Hermes' `danger.py --dump-corpus` (seed 1); override with
//! `APPROVAL_CORPUS=FILE`.
//!
//! Hermes side: when `HERMES_PY` (default `/work/hermes-venv/bin/python`) and `danger.py`
//! (`HERMES_DANGER_PY`, default `shared/bench/python/danger.py` beside the checkout)
//! exist, the bench first runs `danger.py --json -r 5` and times our detector the same way
//! (5 timed passes after one warm-up, µs per command, median), then prints both and the
//! ratio. Criterion's own figures follow (`approval/detect/mix` is one pass over the
//! whole corpus; divide by 10 000 for µs per command).
//!
//! `cargo bench -p toolhost-approval --bench approval`
// Test code: starts toolhost, fixtures and helper programs directly (exec_policy.rs).
#![allow(clippy::disallowed_methods)]

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use criterion::{Criterion, Throughput};
use toolhost_approval::{detect, detect_full_parser};

fn corpus() -> Vec<String> {
    let path = std::env::var_os("APPROVAL_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/data/danger-corpus.txt")
        });
    match std::fs::read_to_string(&path) {
        Ok(text) => text.lines().map(str::to_string).collect(),
        Err(err) => {
            eprintln!("cannot read corpus {}: {err}", path.display());
            Vec::new()
        }
    }
}

/// µs per command for each of `reps` passes (after one warm-up pass).
fn passes(cmds: &[String], reps: usize, f: fn(&str) -> toolhost_approval::Verdict) -> Vec<f64> {
    for c in cmds {
        black_box(f(c));
    }
    (0..reps)
        .map(|_| {
            let start = Instant::now();
            for c in cmds {
                black_box(f(c));
            }
            start.elapsed().as_secs_f64() * 1e6 / cmds.len() as f64
        })
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn hermes_side_by_side(cmds: &[String]) {
    let python =
        std::env::var("HERMES_PY").unwrap_or_else(|_| "/work/hermes-venv/bin/python".into());
    // `shared/` sits next to the checkout (`/work/main`, CI's clone) or next to the
    // worktrees' folder (`/work/wt/NAME`).
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let script = std::env::var_os("HERMES_DANGER_PY")
        .map(PathBuf::from)
        .or_else(|| {
            ["../../shared", "../../../shared"]
                .iter()
                .map(|rel| manifest.join(rel).join("bench/python/danger.py"))
                .find(|p| p.exists())
        })
        .unwrap_or_else(|| manifest.join("../../shared/bench/python/danger.py"));
    let ours = median(passes(cmds, 5, detect));
    let ours_full = median(passes(cmds, 5, detect_full_parser));
    println!(
        "toolhost detect [all {}]: {ours:.3} us/command (median of 5 passes)",
        cmds.len()
    );
    println!("toolhost detect, full parser only: {ours_full:.3} us/command");
    if !std::path::Path::new(&python).exists() || !script.exists() {
        println!("Hermes not measured: set HERMES_PY and HERMES_DANGER_PY (see the bench header)");
        return;
    }
    let out = std::process::Command::new(&python)
        .arg(&script)
        .args(["--json", "-r", "5"])
        .env("HERMES_HOME", "/tmp/hermes-bench-home")
        .env("HERMES_DISABLE_LAZY_INSTALLS", "1")
        .output();
    let hermes = out
        .ok()
        .and_then(|o| serde_json::from_slice::<serde_json::Value>(&o.stdout).ok())
        .and_then(|v| v["us_per_command"]["detect_dangerous_command[all]"]["median"].as_f64());
    let ours_after = median(passes(cmds, 5, detect));
    match hermes {
        Some(h) => {
            let ours = ours.max(ours_after);
            println!(
                "Hermes detect_dangerous_command [all]: {h:.1} us/command (median of 5 passes)"
            );
            println!("toolhost after Hermes: {ours_after:.3} us/command");
            println!(
                "ratio Hermes / toolhost (worse of our two runs): {:.0}x",
                h / ours
            );
        }
        None => println!("Hermes run failed: check HERMES_PY ({python})"),
    }
}

fn main() {
    let cmds = corpus();
    if cmds.is_empty() {
        return;
    }
    let bench_mode = std::env::args().any(|a| a == "--bench");
    if bench_mode {
        hermes_side_by_side(&cmds);
    }
    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("approval");
    group.throughput(Throughput::Elements(cmds.len() as u64));
    group.bench_function("detect/mix", |b| {
        b.iter(|| {
            for cmd in &cmds {
                black_box(detect(cmd));
            }
        })
    });
    group.bench_function("detect_full_parser/mix", |b| {
        b.iter(|| {
            for cmd in &cmds {
                black_box(detect_full_parser(cmd));
            }
        })
    });
    group.finish();
    c.final_summary();
}
