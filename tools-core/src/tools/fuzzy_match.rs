//! Find-and-replace that forgives the ways models misquote code: the engine behind
//! `patch` (replace mode and V4A hunks).
//!
//! Strategies, tried in order until one finds the text (Hermes' chain): exact; each
//! line trimmed; runs of spaces/tabs collapsed; indentation ignored; `\n`/`\t`/`\r`
//! escapes in `old` unescaped; first and last line trimmed; typographic characters
//! (smart quotes, dashes, ellipsis, NBSP) folded to ASCII; block anchored on its exact
//! first and last lines with a similar middle. A strategy that finds more than one
//! place is an error unless `replace_all`.
//!
//! After a fuzzy match the replacement is re-indented to the file's indentation, keeps
//! the file's typographic characters where the model only folded them, and is refused
//! when it carries `\'`/`\"` escapes the file does not have (tool-call escape drift).
//!
//! Differences from Hermes: the block-anchor strategy needs the middle lines to be
//! ≥ 80 % similar (Hermes: 50 %, 70 % with several candidates), and Hermes' last
//! strategy ("half of the lines ≥ 80 % similar") is dropped: both replaced blocks the
//! model had visibly never seen (stale reads), silently overwriting other edits. Those
//! cases now fail with the "Did you mean" snippet, and the model re-reads.

use similar::{DiffOp, TextDiff};

/// Which strategy found the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Byte-for-byte.
    Exact,
    /// Each line trimmed.
    LineTrimmed,
    /// Runs of spaces and tabs collapsed.
    WhitespaceNormalized,
    /// Leading whitespace ignored.
    IndentationFlexible,
    /// `\n`, `\t`, `\r` escapes in the pattern unescaped.
    EscapeNormalized,
    /// First and last lines trimmed.
    TrimmedBoundary,
    /// Typographic characters folded to ASCII.
    UnicodeNormalized,
    /// First and last lines exact, middle similar.
    BlockAnchor,
}

impl Strategy {
    /// Snake-case name for results.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Exact => "exact",
            Strategy::LineTrimmed => "line_trimmed",
            Strategy::WhitespaceNormalized => "whitespace_normalized",
            Strategy::IndentationFlexible => "indentation_flexible",
            Strategy::EscapeNormalized => "escape_normalized",
            Strategy::TrimmedBoundary => "trimmed_boundary",
            Strategy::UnicodeNormalized => "unicode_normalized",
            Strategy::BlockAnchor => "block_anchor",
        }
    }
}

/// A successful replacement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replaced {
    /// The new content.
    pub content: String,
    /// How many places were replaced.
    pub count: usize,
    /// The strategy that found them.
    pub strategy: Strategy,
}

/// Why nothing was replaced. `Display` is the model-facing message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MatchError {
    /// `old` is empty.
    #[error("old_string cannot be empty")]
    EmptyOld,
    /// `old == new`.
    #[error("old_string and new_string are identical")]
    Identical,
    /// No strategy found `old`.
    #[error("Could not find a match for old_string")]
    NotFound,
    /// Found in several places and `replace_all` is off.
    #[error(
        "Found {0} matches for old_string. Provide more context to make it unique, or use \
         replace_all=true."
    )]
    Ambiguous(usize),
    /// The replacement carries escapes the file does not have.
    #[error(
        "Escape-drift detected: old_string and new_string contain the literal sequence \
         {0} but the matched region of the file does not. This is almost always a \
         tool-call serialization artifact (a quote prefixed with a spurious backslash). \
         Re-read the file and pass old_string/new_string without the backslashes."
    )]
    EscapeDrift(&'static str),
}

/// Middle-line similarity the block-anchor strategy needs.
const BLOCK_ANCHOR_MIN_SIMILARITY: f32 = 0.80;

type Span = (usize, usize);

/// A strategy: every span of `content` that matches `pattern`.
type Finder = fn(&str, &str) -> Vec<Span>;

/// Replace `old` with `new` in `content` (see the module docs).
pub fn find_and_replace(
    content: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<Replaced, MatchError> {
    if old.is_empty() {
        return Err(MatchError::EmptyOld);
    }
    if old == new {
        return Err(MatchError::Identical);
    }
    let strategies: [(Strategy, Finder); 8] = [
        (Strategy::Exact, exact),
        (Strategy::LineTrimmed, line_trimmed),
        (Strategy::WhitespaceNormalized, whitespace_normalized),
        (Strategy::IndentationFlexible, indentation_flexible),
        (Strategy::EscapeNormalized, escape_normalized),
        (Strategy::TrimmedBoundary, trimmed_boundary),
        (Strategy::UnicodeNormalized, unicode_normalized),
        (Strategy::BlockAnchor, block_anchor),
    ];
    for (strategy, find) in strategies {
        let mut spans = find(content, old);
        spans.retain(|&(start, end)| end > start);
        if spans.is_empty() {
            continue;
        }
        if spans.len() > 1 && !replace_all {
            return Err(MatchError::Ambiguous(spans.len()));
        }
        let regions: String = spans.iter().map(|&(s, e)| &content[s..e]).collect();
        if strategy != Strategy::Exact {
            for suspect in ["\\'", "\\\""] {
                if new.contains(suspect) && old.contains(suspect) && !regions.contains(suspect) {
                    return Err(MatchError::EscapeDrift(suspect));
                }
            }
        }
        let new = unescape_like_region(new, &regions);
        let mut out = content.to_string();
        for &(start, end) in spans.iter().rev() {
            let region = &content[start..end];
            let mut replacement = new.clone();
            if strategy == Strategy::UnicodeNormalized {
                replacement = keep_region_unicode(region, old, &replacement);
            }
            if strategy != Strategy::Exact {
                replacement = reindent(region, old, &replacement);
            }
            out.replace_range(start..end, &replacement);
        }
        return Ok(Replaced {
            content: out,
            count: spans.len(),
            strategy,
        });
    }
    Err(MatchError::NotFound)
}

// ---------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------

fn exact(content: &str, pattern: &str) -> Vec<Span> {
    if pattern.is_empty() {
        return Vec::new();
    }
    content
        .match_indices(pattern)
        .map(|(i, m)| (i, i + m.len()))
        .collect()
}

/// Byte spans of each line (without the `\n`).
fn line_spans(content: &str) -> Vec<Span> {
    let mut spans = Vec::new();
    let mut start = 0;
    for (i, b) in content.bytes().enumerate() {
        if b == b'\n' {
            spans.push((start, i));
            start = i + 1;
        }
    }
    spans.push((start, content.len()));
    spans
}

/// Blocks of whole lines whose normalized form equals the normalized pattern lines.
fn line_blocks(content: &str, pattern: &str, normalize: fn(&str) -> &str) -> Vec<Span> {
    let wanted: Vec<&str> = pattern.split('\n').map(normalize).collect();
    let spans = line_spans(content);
    let lines: Vec<&str> = spans
        .iter()
        .map(|&(s, e)| normalize(&content[s..e]))
        .collect();
    let n = wanted.len();
    if n == 0 || n > lines.len() {
        return Vec::new();
    }
    let mut found = Vec::new();
    let mut i = 0;
    while i + n <= lines.len() {
        if lines[i..i + n] == wanted[..] {
            found.push((spans[i].0, spans[i + n - 1].1));
            i += n;
        } else {
            i += 1;
        }
    }
    found
}

fn line_trimmed(content: &str, pattern: &str) -> Vec<Span> {
    line_blocks(content, pattern, str::trim)
}

fn indentation_flexible(content: &str, pattern: &str) -> Vec<Span> {
    line_blocks(content, pattern, str::trim_start)
}

fn trimmed_boundary(content: &str, pattern: &str) -> Vec<Span> {
    let wanted: Vec<&str> = pattern.split('\n').collect();
    let n = wanted.len();
    let spans = line_spans(content);
    if n > spans.len() {
        return Vec::new();
    }
    let same = |line: &str, want: &str, edge: bool| {
        if edge {
            line.trim() == want.trim()
        } else {
            line == want
        }
    };
    let mut found = Vec::new();
    let mut i = 0;
    while i + n <= spans.len() {
        let hit = (0..n).all(|k| {
            let (s, e) = spans[i + k];
            same(&content[s..e], wanted[k], k == 0 || k == n - 1)
        });
        if hit {
            found.push((spans[i].0, spans[i + n - 1].1));
            i += n;
        } else {
            i += 1;
        }
    }
    found
}

fn escape_normalized(content: &str, pattern: &str) -> Vec<Span> {
    let unescaped = pattern
        .replace("\\n", "\n")
        .replace("\\t", "\t")
        .replace("\\r", "\r");
    if unescaped == pattern {
        return Vec::new();
    }
    exact(content, &unescaped)
}

/// A normalized copy of a text with, for every byte of the copy, the original byte
/// range it came from.
struct Folded {
    text: String,
    starts: Vec<usize>,
    ends: Vec<usize>,
}

impl Folded {
    fn new(original: &str, fold: impl Fn(&str, usize) -> Option<(String, usize)>) -> Self {
        let mut folded = Folded {
            text: String::with_capacity(original.len()),
            starts: Vec::with_capacity(original.len()),
            ends: Vec::with_capacity(original.len()),
        };
        let mut i = 0;
        while i < original.len() {
            let (piece, consumed) = fold(original, i).unwrap_or_else(|| {
                let len = original[i..].chars().next().map_or(1, char::len_utf8);
                (original[i..i + len].to_string(), len)
            });
            for _ in 0..piece.len() {
                folded.starts.push(i);
                folded.ends.push(i + consumed);
            }
            folded.text.push_str(&piece);
            i += consumed;
        }
        folded
    }

    fn to_original(&self, spans: Vec<Span>) -> Vec<Span> {
        spans
            .into_iter()
            .filter(|&(s, e)| e > s)
            .map(|(s, e)| (self.starts[s], self.ends[e - 1]))
            .collect()
    }
}

fn fold_whitespace(text: &str, i: usize) -> Option<(String, usize)> {
    let bytes = text.as_bytes();
    if !matches!(bytes[i], b' ' | b'\t') {
        return None;
    }
    let run = bytes[i..]
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t'))
        .count();
    Some((" ".to_string(), run))
}

fn whitespace_normalized(content: &str, pattern: &str) -> Vec<Span> {
    let content = Folded::new(content, fold_whitespace);
    let pattern = Folded::new(pattern, fold_whitespace);
    content.to_original(exact(&content.text, &pattern.text))
}

fn unicode_fold(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{201c}' | '\u{201d}' => "\"",
        '\u{2018}' | '\u{2019}' => "'",
        '\u{2014}' => "--",
        '\u{2013}' => "-",
        '\u{2026}' => "...",
        '\u{00a0}' => " ",
        _ => return None,
    })
}

fn fold_unicode(text: &str, i: usize) -> Option<(String, usize)> {
    let c = text[i..].chars().next()?;
    unicode_fold(c).map(|s| (s.to_string(), c.len_utf8()))
}

fn unicode_normalized(content: &str, pattern: &str) -> Vec<Span> {
    let folded_content = Folded::new(content, fold_unicode);
    let folded_pattern = Folded::new(pattern, fold_unicode);
    if folded_content.text == content && folded_pattern.text == pattern {
        return Vec::new();
    }
    let mut spans = exact(&folded_content.text, &folded_pattern.text);
    if spans.is_empty() {
        spans = line_trimmed(&folded_content.text, &folded_pattern.text);
    }
    folded_content.to_original(spans)
}

fn similarity(a: &str, b: &str) -> f32 {
    if a == b {
        return 1.0;
    }
    TextDiff::from_chars(a, b).ratio()
}

fn block_anchor(content: &str, pattern: &str) -> Vec<Span> {
    let folded_pattern = Folded::new(pattern, fold_unicode).text;
    let wanted: Vec<&str> = folded_pattern.split('\n').collect();
    let n = wanted.len();
    if n < 3 {
        return Vec::new();
    }
    let folded_content = Folded::new(content, fold_unicode);
    let spans = line_spans(&folded_content.text);
    if n > spans.len() {
        return Vec::new();
    }
    let line = |k: usize| &folded_content.text[spans[k].0..spans[k].1];
    let (first, last) = (wanted[0].trim(), wanted[n - 1].trim());
    let wanted_middle = wanted[1..n - 1].join("\n");
    let mut found = Vec::new();
    for i in 0..=spans.len() - n {
        if line(i).trim() != first || line(i + n - 1).trim() != last {
            continue;
        }
        let middle = &folded_content.text[spans[i + 1].0..spans[i + n - 2].1];
        if similarity(middle, &wanted_middle) >= BLOCK_ANCHOR_MIN_SIMILARITY {
            found.push((spans[i].0, spans[i + n - 1].1));
        }
    }
    // Overlapping candidates cannot both be replaced: keep the first of each overlap.
    let mut kept: Vec<Span> = Vec::new();
    for span in found {
        if kept.last().is_none_or(|&(_, end)| span.0 > end) {
            kept.push(span);
        }
    }
    folded_content.to_original(kept)
}

// ---------------------------------------------------------------------------
// Shaping the replacement after a fuzzy match
// ---------------------------------------------------------------------------

/// Turn `\t` / `\r` written as two characters into the real characters, but only when
/// the replaced region of the file contains real tabs / carriage returns (a file that
/// holds a literal backslash-t keeps getting one).
fn unescape_like_region(new: &str, regions: &str) -> String {
    let mut out = new.to_string();
    if out.contains("\\t") && regions.contains('\t') {
        out = out.replace("\\t", "\t");
    }
    if out.contains("\\r") && regions.contains('\r') {
        out = out.replace("\\r", "\r");
    }
    out
}

fn leading_ws(line: &str) -> &str {
    let n = line.len() - line.trim_start_matches([' ', '\t']).len();
    &line[..n]
}

fn first_meaningful_line(text: &str) -> Option<&str> {
    text.split('\n').find(|l| !l.trim().is_empty())
}

/// Re-indent `new` to the file's indentation after a fuzzy match. Each indentation
/// the model used in `old` is mapped to the file's indentation on the corresponding
/// line (so 2-space nesting becomes the file's 4-space nesting level by level); deeper
/// levels the model introduced are scaled by the same unit when the mapping has one;
/// anything else keeps its nesting relative to the first line (Hermes' rule, which only
/// shifts the base indent and so leaves `return` at 6 spaces in a 4-space file).
fn reindent(region: &str, old: &str, new: &str) -> String {
    let (Some(old_first), Some(file_first)) =
        (first_meaningful_line(old), first_meaningful_line(region))
    else {
        return new.to_string();
    };
    let (old_base, file_base) = (leading_ws(old_first), leading_ws(file_first));
    let mapping = indent_mapping(region, old);
    if new.is_empty() || (old_base == file_base && mapping.iter().all(|(o, f)| o == f)) {
        return new.to_string();
    }
    // Spaces-only unit scaling: file extra indent = k × model extra indent.
    let scale = {
        let ratios: Vec<(usize, usize)> = mapping
            .iter()
            .filter(|(o, f)| !o.contains('\t') && !f.contains('\t'))
            .filter_map(|(o, f)| {
                let extra_old = o.len().checked_sub(old_base.len())?;
                let extra_file = f.len().checked_sub(file_base.len())?;
                (extra_old > 0).then_some((extra_old, extra_file))
            })
            .collect();
        match ratios.first() {
            Some(&(o, f)) if f % o == 0 && ratios.iter().all(|&(a, b)| b * o == a * f) => {
                Some(f / o)
            }
            _ => None,
        }
    };
    new.split('\n')
        .map(|line| {
            if line.trim().is_empty() {
                return line.to_string();
            }
            let indent = leading_ws(line);
            let rest = &line[indent.len()..];
            if let Some((_, file_indent)) = mapping.iter().find(|(o, _)| o == indent) {
                return format!("{file_indent}{rest}");
            }
            match indent.strip_prefix(old_base) {
                Some(extra) if scale.is_some() && !extra.contains('\t') => {
                    let width = extra.len() * scale.unwrap_or(1);
                    format!("{file_base}{}{rest}", " ".repeat(width))
                }
                Some(extra) => format!("{file_base}{extra}{rest}"),
                None => format!("{file_base}{rest}"),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Pairs (indent in `old`, indent in the file) from lines that correspond one to one;
/// empty when the line counts differ or one model indent maps to two file indents.
fn indent_mapping(region: &str, old: &str) -> Vec<(String, String)> {
    let old_lines: Vec<&str> = old.split('\n').collect();
    let file_lines: Vec<&str> = region.split('\n').collect();
    if old_lines.len() != file_lines.len() {
        return Vec::new();
    }
    let mut mapping: Vec<(String, String)> = Vec::new();
    for (o, f) in old_lines.iter().zip(&file_lines) {
        if o.trim().is_empty() || f.trim().is_empty() {
            continue;
        }
        let (oi, fi) = (leading_ws(o), leading_ws(f));
        match mapping.iter().find(|(k, _)| k == oi) {
            Some((_, v)) if v != fi => return Vec::new(),
            Some(_) => {}
            None => mapping.push((oi.to_string(), fi.to_string())),
        }
    }
    mapping
}

/// After a typographic-fold match, apply only the model's real edits to the file's
/// text so unchanged spans keep their em-dashes and smart quotes.
fn keep_region_unicode(region: &str, old: &str, new: &str) -> String {
    let folded_region = Folded::new(region, fold_unicode);
    let folded_old = Folded::new(old, fold_unicode).text;
    if folded_region.text != folded_old {
        return new.to_string();
    }
    let old_chars: Vec<usize> = char_offsets(&folded_old);
    let new_chars: Vec<usize> = char_offsets(new);
    let diff = TextDiff::from_chars(folded_old.as_str(), new);
    let mut out = String::new();
    let mut copied_to = 0usize;
    for op in diff.ops() {
        match *op {
            DiffOp::Equal { old_index, len, .. } => {
                let (ns, ne) = (old_chars[old_index], old_chars[old_index + len]);
                if ne > ns {
                    let start = folded_region.starts[ns].max(copied_to);
                    let end = folded_region.ends[ne - 1];
                    if end > start {
                        out.push_str(&region[start..end]);
                        copied_to = end;
                    }
                }
            }
            DiffOp::Insert {
                new_index, new_len, ..
            }
            | DiffOp::Replace {
                new_index, new_len, ..
            } => {
                out.push_str(&new[new_chars[new_index]..new_chars[new_index + new_len]]);
            }
            DiffOp::Delete { .. } => {}
        }
    }
    out
}

/// Byte offset of every char, plus the end.
fn char_offsets(text: &str) -> Vec<usize> {
    text.char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(text.len()))
        .collect()
}

// ---------------------------------------------------------------------------
// "Did you mean" feedback
// ---------------------------------------------------------------------------

/// Lines scored at most, to bound the cost on huge files.
const MAX_HINT_LINES: usize = 20_000;

/// Up to three numbered snippets of `content` that resemble the start of `old`, for a
/// failed match ("Did you mean one of these sections?"); empty when nothing is close.
pub fn closest_sections(old: &str, content: &str) -> String {
    let old_lines: Vec<&str> = old.lines().collect();
    let Some(anchor) = old_lines.iter().map(|l| l.trim()).find(|l| !l.is_empty()) else {
        return String::new();
    };
    let lines: Vec<&str> = content.lines().collect();
    let mut scored: Vec<(f32, usize)> = lines
        .iter()
        .take(MAX_HINT_LINES)
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (similarity(anchor, l.trim()), i))
        .filter(|&(score, _)| score > 0.3)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut seen = Vec::new();
    let mut parts = Vec::new();
    for &(_, idx) in scored.iter().take(3) {
        let start = idx.saturating_sub(2);
        let end = (idx + old_lines.len() + 2).min(lines.len());
        if seen.contains(&(start, end)) {
            continue;
        }
        seen.push((start, end));
        let snippet: Vec<String> = (start..end)
            .map(|j| format!("{:4}| {}", j + 1, lines[j]))
            .collect();
        parts.push(snippet.join("\n"));
    }
    parts.join("\n---\n")
}

#[cfg(test)]
#[path = "fuzzy_match_tests.rs"]
mod tests;
