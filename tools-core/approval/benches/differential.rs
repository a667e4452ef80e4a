//! The differential harness (`src/differential_tests.rs`) as a plain bench target: every
//! adversarial-corpus and category-corpus command in real bash inside bubblewrap, compared with the
//! detector's verdict; prints the miss and false-positive-candidate counts, the misses,
//! and how long the run took. Needs `TOOLHOST_TEST_BWRAP` (the bubblewrap binary).
//!
//! `TOOLHOST_TEST_BWRAP=/usr/bin/bwrap cargo bench -p toolhost-approval --bench differential`

// A benchmark harness, like a test: failing loudly on a broken setup is the point.
#![allow(clippy::expect_used, clippy::unwrap_used)]
// It runs bash in bubblewrap as ground truth, as the unit tests do (test-only code).
#![allow(clippy::disallowed_methods)]

use std::time::Instant;

/// What the harness calls `super::detect::detect`.
mod detect {
    pub use toolhost_approval::detect;
}

// The harness and its corpus, compiled here as they are in the unit tests (their
// `#[test]` functions are left out of a non-test build, so some helpers go unused).
#[allow(dead_code, unused_imports)]
#[path = "../src/category_corpus_tests.rs"]
mod category_corpus_tests;
#[allow(dead_code, unused_imports)]
#[path = "../src/corpus_tests.rs"]
mod corpus_tests;
#[allow(dead_code, unused_imports)]
#[path = "../src/differential_tests.rs"]
mod differential_tests;

fn main() {
    // `cargo bench` passes `--bench`; a name filter that excludes us means: do nothing.
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args
        .iter()
        .any(|a| !a.starts_with("--") && !"differential".contains(a.as_str()))
    {
        return;
    }
    let bwrap = differential_tests::bwrap();
    let start = Instant::now();
    let report = differential_tests::run_corpus(&bwrap);
    println!("{report}");
    let flagged = report.flagged.max(1) as f64;
    println!(
        "miss rate {:.1} % of commands; false-positive candidates {:.1} % of flagged; {:.1} s",
        100.0 * report.misses.len() as f64 / report.commands.max(1) as f64,
        100.0 * report.false_positive_candidates as f64 / flagged,
        start.elapsed().as_secs_f64()
    );
    for miss in &report.misses {
        println!("miss: {miss}");
    }
}
