//! The adversarial corpus (`tools-core/tests/data/approval-adversarial.txt`): evasions of
//! the floor, fail-closed cases and look-alikes, each with the verdict it must get. Every
//! mismatch is listed at once.

use super::detect::detect;

const CORPUS: &str = include_str!("../../tests/data/approval-adversarial.txt");

/// `{NL}`, `{ESC}`, `{BEL}` and `{U+XXXX}` placeholders to characters.
fn decode(text: &str) -> String {
    let mut out = text
        .replace("{NL}", "\n")
        .replace("{ESC}", "\u{1b}")
        .replace("{BEL}", "\u{7}");
    while let Some(start) = out.find("{U+") {
        let Some(len) = out[start..].find('}') else {
            break;
        };
        let hex = &out[start + 3..start + len];
        let c = u32::from_str_radix(hex, 16)
            .ok()
            .and_then(char::from_u32)
            .unwrap_or('?');
        out.replace_range(start..start + len + 1, &c.to_string());
    }
    out
}

/// (expected verdict, command) for every corpus line.
pub(super) fn corpus() -> Vec<(&'static str, String)> {
    CORPUS
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once('\t'))
        .map(|(verdict, command)| (verdict, decode(command)))
        .collect()
}

#[test]
fn adversarial_corpus_verdicts() {
    let corpus = corpus();
    assert!(corpus.len() >= 400, "corpus has {} commands", corpus.len());
    let mut wrong = Vec::new();
    for (want, command) in &corpus {
        let verdict = detect(command);
        let got = if verdict.hardline() {
            "hardline"
        } else if verdict.dangerous() {
            "flagged"
        } else {
            "benign"
        };
        if got != *want {
            wrong.push(format!(
                "{command:?}: want {want}, got {got} {:?}",
                verdict.rule_keys()
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
