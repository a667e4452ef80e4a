//! Rendering a page of `search_files` content matches: the matched and context lines
//! are fetched again (streamed, only those lines), cut, redacted, and shown as a list of
//! matches or as path-grouped text.

use std::collections::{BTreeMap, BTreeSet};
use std::io::BufReader;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::walk::{Hit, Search};
use super::{DENSIFY_MIN_MATCHES, MAX_MATCH_LINE_CHARS};
use crate::tools::secret_files::redact_shown;
use crate::tools::text_file::{LineScanner, truncate_chars};

fn shown_line(line: &str, spilled: bool) -> String {
    let (kept, cut) = truncate_chars(line, MAX_MATCH_LINE_CHARS);
    let text = if cut {
        format!("{kept}... [truncated]")
    } else {
        kept.to_string()
    };
    redact_shown(&text, spilled)
}

pub(super) fn render_matches(
    result: &mut Map<String, Value>,
    search: &Search<'_>,
    files: &[PathBuf],
    page: &[&Hit],
    context: usize,
) {
    if page.is_empty() {
        return;
    }
    // Fetch only the lines this page shows (matches and their context), streaming.
    let mut wanted: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    for hit in page {
        let from = hit.line.saturating_sub(context).max(1);
        wanted
            .entry(hit.file)
            .or_default()
            .extend(from..=hit.line + context);
    }
    let texts: BTreeMap<usize, BTreeMap<usize, String>> = wanted
        .iter()
        .map(|(&file, lines)| (file, lines_at(search, &files[file], lines)))
        .collect();
    let line_text = |file: usize, line: usize| -> Option<String> {
        let spilled = search.is_spilled(&files[file]);
        texts.get(&file)?.get(&line).map(|l| shown_line(l, spilled))
    };
    if context == 0 && page.len() < DENSIFY_MIN_MATCHES {
        let matches: Vec<Value> = page
            .iter()
            .map(|hit| {
                json!({
                    "path": search.display.show(&files[hit.file]),
                    "line": hit.line,
                    "content": line_text(hit.file, hit.line).unwrap_or_default(),
                })
            })
            .collect();
        result.insert("matches".into(), json!(matches));
        return;
    }
    // Path-grouped text: "path", then "  N: match" / "  N- context" rows, "  --" between
    // separate groups of one file.
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < page.len() {
        let file = page[i].file;
        let mut j = i;
        while j < page.len() && page[j].file == file {
            j += 1;
        }
        let matched: BTreeSet<usize> = page[i..j].iter().map(|h| h.line).collect();
        let mut shown: BTreeSet<usize> = BTreeSet::new();
        for &line in &matched {
            shown.extend(line.saturating_sub(context).max(1)..=line + context);
        }
        out.push(search.display.show(&files[file]));
        let mut previous: Option<usize> = None;
        for &line in &shown {
            let Some(text) = line_text(file, line) else {
                continue;
            };
            if previous.is_some_and(|p| line > p + 1) {
                out.push("  --".to_string());
            }
            let sep = if matched.contains(&line) { ':' } else { '-' };
            out.push(format!("  {line}{sep} {}", text.trim_end()));
            previous = Some(line);
        }
        i = j;
    }
    let format = if context > 0 {
        "path-grouped: each file path on its own line, followed by indented rows \
         '<line>: <content>' for matches and '<line>- <content>' for context lines; '--' \
         separates non-adjacent groups"
    } else {
        "path-grouped: each file path on its own line, followed by indented \
         '<line>: <content>' rows for matches in that file"
    };
    result.insert("matches_format".into(), json!(format));
    result.insert("matches_text".into(), json!(out.join("\n")));
}

/// The text of the given 1-based line numbers of a file (lines that do not exist are
/// absent), streamed so only those lines are held.
fn lines_at(search: &Search<'_>, path: &Path, wanted: &BTreeSet<usize>) -> BTreeMap<usize, String> {
    let mut out = BTreeMap::new();
    let Some(&last) = wanted.last() else {
        return out;
    };
    let Ok(opened) = search.fs.open_verified(path) else {
        return out;
    };
    if search.is_secret_real(&opened.real_path) {
        return out;
    }
    let reader = opened.reader;
    let mut scanner = LineScanner::new(BufReader::with_capacity(64 * 1024, reader));
    let keep = MAX_MATCH_LINE_CHARS * 4 + 1;
    let mut number = 0usize;
    while number < last {
        let want = wanted.contains(&(number + 1));
        match scanner.next_line(if want { keep } else { 0 }) {
            Ok(Some(line)) => {
                number += 1;
                if want {
                    out.insert(number, String::from_utf8_lossy(&line.bytes).into_owned());
                }
            }
            _ => break,
        }
    }
    out
}
