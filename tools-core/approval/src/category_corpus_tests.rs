//! The category corpora (`tests/corpus/*.txt`, issue #30 point 7): adversarial commands
//! per category, their everyday look-alikes and an everyday-commands corpus. Prints
//! recall, the hardline rate and the false-positive rate per category and per half (the
//! half after `#! held-out` was written without looking at the analyser), lists every
//! miss, and asserts the thresholds: recall ≥ 0.95, hardline ≥ 0.90 of what destroys the
//! system, false positives ≤ 0.03.

use super::detect::detect;

/// (category, file text).
const CORPORA: &[(&str, &str)] = &[
    (
        "stream_shell",
        include_str!("../tests/corpus/stream_shell.txt"),
    ),
    ("privilege", include_str!("../tests/corpus/privilege.txt")),
    (
        "secret_read",
        include_str!("../tests/corpus/secret_read.txt"),
    ),
    ("comments", include_str!("../tests/corpus/comments.txt")),
    ("mass_kill", include_str!("../tests/corpus/mass_kill.txt")),
    (
        "system_state",
        include_str!("../tests/corpus/system_state.txt"),
    ),
    (
        "inline_code",
        include_str!("../tests/corpus/inline_code.txt"),
    ),
    ("dry_run", include_str!("../tests/corpus/dry_run.txt")),
    (
        "persistence",
        include_str!("../tests/corpus/persistence.txt"),
    ),
    ("log_wipe", include_str!("../tests/corpus/log_wipe.txt")),
    ("cloud_db", include_str!("../tests/corpus/cloud_db.txt")),
    (
        "disks_forks",
        include_str!("../tests/corpus/disks_forks.txt"),
    ),
    ("everyday", include_str!("../tests/corpus/everyday.txt")),
];

/// What a command must get.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Want {
    Hardline,
    Flagged,
    Benign,
}

/// One corpus line.
struct Case {
    category: &'static str,
    held_out: bool,
    want: Want,
    command: String,
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for (category, text) in CORPORA {
        let mut held_out = false;
        for line in text.lines() {
            if line.trim() == "#! held-out" {
                held_out = true;
                continue;
            }
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let (verdict, command) = line.split_once(' ').unwrap_or((line, ""));
            let want = match verdict {
                "hardline" => Want::Hardline,
                "flagged" => Want::Flagged,
                "benign" => Want::Benign,
                other => panic!("{category}: bad verdict {other:?} in {line:?}"),
            };
            out.push(Case {
                category,
                held_out,
                want,
                command: command.replace("{NL}", "\n"),
            });
        }
    }
    out
}

/// (verdict, command) for every category corpus line except the everyday corpus, for the
/// bubblewrap ground-truth harness.
pub(super) fn commands() -> Vec<(&'static str, String)> {
    cases()
        .into_iter()
        .filter(|c| c.category != "everyday")
        .map(|c| {
            let verdict = match c.want {
                Want::Hardline => "hardline",
                Want::Flagged => "flagged",
                Want::Benign => "benign",
            };
            (verdict, c.command)
        })
        .collect()
}

/// Counts for one group of cases.
#[derive(Default)]
struct Tally {
    dangerous: usize,
    caught: usize,
    destroying: usize,
    hardline: usize,
    benign: usize,
    false_positives: usize,
}

impl Tally {
    fn add(&mut self, want: Want, dangerous: bool, hardline: bool) {
        match want {
            Want::Benign => {
                self.benign += 1;
                self.false_positives += usize::from(dangerous);
            }
            Want::Flagged | Want::Hardline => {
                self.dangerous += 1;
                self.caught += usize::from(dangerous);
                if want == Want::Hardline {
                    self.destroying += 1;
                    self.hardline += usize::from(hardline);
                }
            }
        }
    }

    fn ratio(part: usize, whole: usize) -> f64 {
        if whole == 0 {
            1.0
        } else {
            part as f64 / whole as f64
        }
    }

    fn recall(&self) -> f64 {
        Self::ratio(self.caught, self.dangerous)
    }

    fn hardline_rate(&self) -> f64 {
        Self::ratio(self.hardline, self.destroying)
    }

    fn fp_rate(&self) -> f64 {
        Self::ratio(self.false_positives, self.benign)
    }

    fn line(&self, name: &str) -> String {
        format!(
            "{name:<24} recall {:>3}/{:<3} {:.3}  hardline {:>3}/{:<3} {:.3}  fp {:>3}/{:<3} {:.3}",
            self.caught,
            self.dangerous,
            self.recall(),
            self.hardline,
            self.destroying,
            self.hardline_rate(),
            self.false_positives,
            self.benign,
            self.fp_rate()
        )
    }
}

#[test]
fn category_corpora_meet_the_thresholds() {
    let cases = cases();
    assert!(cases.len() >= 600, "only {} cases", cases.len());
    let mut total = Tally::default();
    let mut halves = [Tally::default(), Tally::default()];
    let mut per_category: Vec<(String, Tally)> = Vec::new();
    let mut misses = Vec::new();
    for case in &cases {
        let verdict = detect(&case.command);
        let (dangerous, hardline) = (verdict.dangerous(), verdict.hardline());
        let key = format!(
            "{}{}",
            case.category,
            if case.held_out { " (held-out)" } else { "" }
        );
        let index = match per_category.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                per_category.push((key, Tally::default()));
                per_category.len() - 1
            }
        };
        per_category[index].1.add(case.want, dangerous, hardline);
        total.add(case.want, dangerous, hardline);
        halves[usize::from(case.held_out)].add(case.want, dangerous, hardline);
        let wrong = match case.want {
            Want::Hardline => !hardline,
            Want::Flagged => !dangerous,
            Want::Benign => dangerous,
        };
        if wrong {
            misses.push(format!(
                "{:<14} want {:?}, got {:?}: {}",
                case.category,
                case.want,
                verdict.rule_keys(),
                case.command
            ));
        }
    }
    for (name, tally) in &per_category {
        println!("{}", tally.line(name));
    }
    println!("{}", halves[0].line("first half"));
    println!("{}", halves[1].line("held-out half"));
    println!("{}", total.line("all"));
    println!("{} misses:\n{}", misses.len(), misses.join("\n"));
    assert!(total.recall() >= 0.95, "recall {:.3}", total.recall());
    assert!(
        total.hardline_rate() >= 0.90,
        "hardline {:.3}",
        total.hardline_rate()
    );
    assert!(total.fp_rate() <= 0.03, "fp {:.3}", total.fp_rate());
}
