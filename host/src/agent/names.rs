//! Tool-name repair: models emit `TodoTool_tool`, `Read-File`, `write file` or a name
//! with leaked XML attributes (`terminal" parameter="command`). Before a call is
//! rejected as unknown, its name is cut at the first quote or angle bracket, then tried
//! lower-cased, with `-`/space → `_`, CamelCase → snake_case, with a trailing
//! `_tool`/`-tool`/`tool` stripped (twice), and finally fuzzy-matched (similarity
//! ≥ 0.7, Ratcliff/Obershelp as in Python's `difflib`) — Hermes' order
//! (docs/hermes/agent-loop.md).

use std::collections::BTreeSet;

/// Least similarity for a fuzzy match.
const FUZZY_CUTOFF: f64 = 0.7;

/// The valid name `name` most likely meant, or `None`.
pub fn repair_name(name: &str, valid: &BTreeSet<String>) -> Option<String> {
    let mut name = name;
    for sep in ['"', '\'', '<', '>'] {
        if let Some(index) = name.find(sep)
            && index > 0
        {
            name = &name[..index];
        }
    }
    if name.is_empty() {
        return None;
    }
    let lowered = name.to_lowercase();
    if valid.contains(&lowered) {
        return Some(lowered);
    }
    let normalized = norm(name);
    if valid.contains(&normalized) {
        return Some(normalized);
    }
    let mut candidates: BTreeSet<String> = [
        name.to_string(),
        lowered.clone(),
        normalized,
        camel_snake(name),
    ]
    .into();
    for _ in 0..2 {
        let extra: Vec<String> = candidates
            .iter()
            .filter_map(|c| strip_tool_suffix(c))
            .flat_map(|s| [norm(&s), camel_snake(&s), s])
            .collect();
        candidates.extend(extra);
    }
    if let Some(hit) = candidates
        .into_iter()
        .find(|c| !c.is_empty() && valid.contains(c))
    {
        return Some(hit);
    }
    valid
        .iter()
        .map(|v| (similarity(&lowered, v), v))
        .filter(|(score, _)| *score >= FUZZY_CUTOFF)
        .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(b.1)))
        .map(|(_, v)| v.clone())
}

fn norm(s: &str) -> String {
    s.to_lowercase().replace(['-', ' '], "_")
}

fn camel_snake(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && c.is_uppercase() {
            out.push('_');
        }
        out.extend(c.to_lowercase());
    }
    out
}

fn strip_tool_suffix(s: &str) -> Option<String> {
    let lower = s.to_lowercase();
    ["_tool", "-tool", "tool"].iter().find_map(|suffix| {
        lower.ends_with(suffix).then(|| {
            let cut = s.len() - suffix.len();
            s.get(..cut)
                .unwrap_or_default()
                .trim_end_matches(['_', '-'])
                .to_string()
        })
    })
}

/// `difflib.SequenceMatcher(None, a, b).ratio()`: 2·M / (|a| + |b|), M the characters
/// in the recursively found longest common blocks.
pub fn similarity(a: &str, b: &str) -> f64 {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let total = a.len() + b.len();
    if total == 0 {
        return 1.0;
    }
    2.0 * matching_chars(&a, &b) as f64 / total as f64
}

fn matching_chars(a: &[char], b: &[char]) -> usize {
    let (mut best, mut best_i, mut best_j) = (0, 0, 0);
    let mut prev = vec![0usize; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        let mut row = vec![0usize; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            if ca == cb {
                row[j + 1] = prev[j] + 1;
                if row[j + 1] > best {
                    best = row[j + 1];
                    best_i = i + 1 - best;
                    best_j = j + 1 - best;
                }
            }
        }
        prev = row;
    }
    if best == 0 {
        return 0;
    }
    best + matching_chars(&a[..best_i], &b[..best_j])
        + matching_chars(&a[best_i + best..], &b[best_j + best..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid() -> BTreeSet<String> {
        [
            "todo",
            "read_file",
            "write_file",
            "terminal",
            "patch",
            "browser_click",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }

    #[test]
    fn repairs_like_hermes() {
        let table = [
            ("TODO", Some("todo")),
            ("Read-File", Some("read_file")),
            ("write file", Some("write_file")),
            ("ReadFile", Some("read_file")),
            ("TodoTool_tool", Some("todo")),
            ("Patch_tool", Some("patch")),
            ("BrowserClick_tool", Some("browser_click")),
            (
                "terminal\" parameter=\"command\" string=\"true",
                Some("terminal"),
            ),
            ("read_fille", Some("read_file")),
            ("\"terminal", Some("terminal")),
            ("launch_rockets", None),
            ("", None),
        ];
        for (input, want) in table {
            assert_eq!(repair_name(input, &valid()).as_deref(), want, "{input}");
        }
    }

    #[test]
    fn similarity_matches_difflib() {
        // Values from Python's difflib.SequenceMatcher(None, a, b).ratio().
        assert!((similarity("abcd", "bcde") - 0.75).abs() < 1e-9);
        assert!((similarity("read_fille", "read_file") - 0.947_368_421).abs() < 1e-6);
        assert_eq!(similarity("", ""), 1.0);
        assert_eq!(similarity("abc", "xyz"), 0.0);
    }
}
