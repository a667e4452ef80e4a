//! Walking a `search_files` root: the state of one search (page, deadline,
//! cancellation, the secret-file and spilled-result checks, how paths are shown) and
//! the two walks over the task's file system, by name (`target='files'`) and by content
//! (`target='content'`, streamed line by line), each ending in one page of results.
//!
//! Kept apart from the tool's front (`search_files.rs`: the arguments, the checks on
//! the root, the notes added to the result), which decides what to search: this file
//! does the searching, and holds its costs and limits.

use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use globset::GlobMatcher;
use regex::Regex;
use serde_json::{Map, Value, json};

use super::render::render_matches;
use crate::context::ToolContext;
use crate::files::{FileSystem, WalkControl, WalkOptions};
use crate::tools::secret_files::{SecretFiles, hard_linked, is_spilled_copy};
use crate::tools::text_file::{LineScanner, SNIFF_BYTES, looks_binary};

/// Content search stops counting after this many matches.
const MAX_MATCHES: usize = 10_000;
/// Only the first this-many bytes of a line are searched (minified files).
const MAX_LINE_SCAN_BYTES: usize = 4 * 1024 * 1024;
/// A long file checks the deadline and cancellation every this-many lines.
const STOP_CHECK_LINES: usize = 65_536;

/// How paths are shown: relative to the search root, prefixed the way the model wrote
/// the root, so a result can be passed straight to `read_file`.
pub(super) struct Display {
    pub(super) root: PathBuf,
    pub(super) prefix: String,
    pub(super) root_is_file: bool,
    pub(super) as_given: String,
}

impl Display {
    pub(super) fn show(&self, path: &Path) -> String {
        if self.root_is_file {
            return self.as_given.clone();
        }
        match path.strip_prefix(&self.root) {
            Ok(rel) => format!("{}{}", self.prefix, rel.display()),
            Err(_) => path.display().to_string(),
        }
    }
}

/// Why a walk stopped early.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Stop {
    Deadline,
    Cancelled,
    MatchCap,
}

impl Stop {
    pub(super) fn reason(self) -> &'static str {
        match self {
            Stop::Deadline => "search_timeout",
            Stop::Cancelled => "cancelled",
            Stop::MatchCap => "match_cap",
        }
    }
}

/// One search: what it walks, what it must not show, its page and its limits, and
/// what it left out so far.
pub(super) struct Search<'a> {
    pub(super) fs: &'a dyn FileSystem,
    pub(super) ctx: &'a ToolContext,
    pub(super) secrets: &'a SecretFiles,
    /// The root with symlinks resolved (the walk follows none below it).
    pub(super) real_root: PathBuf,
    pub(super) home: Option<PathBuf>,
    /// `<home>/results` (spilled results get the full redaction).
    pub(super) spill_dirs: Vec<PathBuf>,
    pub(super) root: PathBuf,
    pub(super) display: Display,
    pub(super) limit: usize,
    pub(super) offset: usize,
    pub(super) deadline: Instant,
    pub(super) omitted: usize,
    pub(super) stop: Option<Stop>,
}

impl Search<'_> {
    /// A walked path under the real root (the walk follows no link below the root).
    fn real(&self, path: &Path) -> PathBuf {
        match path.strip_prefix(&self.root) {
            Ok(rel) if !rel.as_os_str().is_empty() => self.real_root.join(rel),
            _ => self.real_root.clone(),
        }
    }

    /// True when a walked file is secret, as walked or under the real root.
    fn is_secret(&self, path: &Path) -> bool {
        let home = self.home.as_deref();
        self.secrets.matches(path, home) || self.secrets.matches(&self.real(path), home)
    }

    /// True when the real path of an opened file is secret.
    pub(super) fn is_secret_real(&self, real: &Path) -> bool {
        self.secrets.matches(real, self.home.as_deref())
    }

    /// True when a walked file is a spilled tool result.
    pub(super) fn is_spilled(&self, path: &Path) -> bool {
        is_spilled_copy(&self.spill_dirs, path, &self.real(path))
    }

    fn check_stop(&mut self) -> bool {
        if self.ctx.cancel.is_cancelled() {
            self.stop = Some(Stop::Cancelled);
        } else if Instant::now() >= self.deadline {
            self.stop = Some(Stop::Deadline);
        }
        self.stop.is_some()
    }
}

/// A glob containing `/` matches the path below the root; otherwise the file name.
fn glob_hit(matcher: &GlobMatcher, has_slash: bool, root: &Path, path: &Path) -> bool {
    if has_slash {
        let rel = path.strip_prefix(root).unwrap_or(path);
        matcher.is_match(rel) || matcher.is_match(path)
    } else {
        path.file_name().is_some_and(|name| matcher.is_match(name))
    }
}

fn page_info(result: &mut Map<String, Value>, total: usize, offset: usize, limit: usize) {
    result.insert("total_count".into(), json!(total));
    if total > offset + limit {
        result.insert("truncated".into(), json!(true));
        result.insert("next_offset".into(), json!(offset + limit));
    }
}

/// `target='files'`: the names under the root that match, newest first; one page.
pub(super) fn find_files(
    search: &mut Search<'_>,
    pattern: &str,
    matcher: &GlobMatcher,
) -> Map<String, Value> {
    let has_slash = pattern.trim_start_matches("**/").contains('/');
    let mut found: Vec<(Option<SystemTime>, PathBuf)> = Vec::new();
    let root = search.root.clone();
    let fs = search.fs;
    let walked = fs.walk(&root, &WalkOptions::default(), &mut |entry| {
        if search.check_stop() {
            return WalkControl::Stop;
        }
        if glob_hit(matcher, has_slash, &root, &entry.path) {
            if search.is_secret(&entry.path) {
                search.omitted += 1;
            } else {
                found.push((entry.modified, entry.path));
            }
        }
        WalkControl::Continue
    });
    if let Err(err) = walked {
        return search_failed(&err);
    }
    let mut result = Map::new();
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let files: Vec<String> = found
        .iter()
        .skip(search.offset)
        .take(search.limit)
        .map(|(_, p)| search.display.show(p))
        .collect();
    page_info(&mut result, found.len(), search.offset, search.limit);
    if !files.is_empty() {
        result.insert("files".into(), json!(files));
    }
    result
}

/// One matching line: the index of its file and its line number.
pub(super) struct Hit {
    pub(super) file: usize,
    pub(super) line: usize,
}

/// `target='content'`: the lines that match, file by file; one page in `mode`
/// (`content` rendered with `context` lines, `files_only` or `count`).
pub(super) fn search_content(
    search: &mut Search<'_>,
    regex: &Regex,
    file_glob: Option<&(bool, GlobMatcher)>,
    mode: &str,
    context: usize,
) -> Map<String, Value> {
    let root = search.root.clone();
    let fs = search.fs;
    let mut files: Vec<PathBuf> = Vec::new();
    let mut counts: Vec<usize> = Vec::new();
    let mut hits: Vec<Hit> = Vec::new();
    let walked = fs.walk(&root, &WalkOptions::default(), &mut |entry| {
        if search.check_stop() {
            return WalkControl::Stop;
        }
        if let Some((has_slash, matcher)) = file_glob
            && !glob_hit(matcher, *has_slash, &root, &entry.path)
        {
            return WalkControl::Continue;
        }
        let Ok(opened) = fs.open_verified(&entry.path) else {
            return WalkControl::Continue;
        };
        // Judge what was opened (the root may be a link that changed since the check).
        if search.is_secret_real(&opened.real_path) {
            search.omitted += 1;
            return WalkControl::Continue;
        }
        let reader = opened.reader;
        let mut scanner = LineScanner::new(BufReader::with_capacity(64 * 1024, reader));
        match scanner.peek() {
            Ok(head) if !looks_binary(&head[..head.len().min(SNIFF_BYTES)]) => {}
            _ => return WalkControl::Continue,
        }
        let file_index = files.len();
        let first_hit = hits.len();
        let mut number = 0usize;
        while let Ok(Some(line)) = scanner.next_line(MAX_LINE_SCAN_BYTES) {
            number += 1;
            if regex.is_match(&String::from_utf8_lossy(&line.bytes)) {
                hits.push(Hit {
                    file: file_index,
                    line: number,
                });
                if hits.len() >= MAX_MATCHES {
                    break;
                }
            }
            if number.is_multiple_of(STOP_CHECK_LINES) && search.check_stop() {
                break;
            }
        }
        let count = hits.len() - first_hit;
        if count > 0 {
            if search.is_secret(&entry.path) || hard_linked(fs, &entry.path) {
                search.omitted += count;
                hits.truncate(first_hit);
                return WalkControl::Continue;
            }
            files.push(entry.path);
            counts.push(count);
        }
        if hits.len() >= MAX_MATCHES {
            search.stop = Some(Stop::MatchCap);
            return WalkControl::Stop;
        }
        if search.stop.is_some() {
            return WalkControl::Stop;
        }
        WalkControl::Continue
    });
    if let Err(err) = walked {
        return search_failed(&err);
    }
    let mut result = Map::new();
    let (offset, limit) = (search.offset, search.limit);
    match mode {
        "files_only" => {
            page_info(&mut result, files.len(), offset, limit);
            let page: Vec<String> = files
                .iter()
                .skip(offset)
                .take(limit)
                .map(|p| search.display.show(p))
                .collect();
            if !page.is_empty() {
                result.insert("files".into(), json!(page));
            }
        }
        "count" => {
            page_info(&mut result, files.len(), offset, limit);
            result.insert("total_count".into(), json!(counts.iter().sum::<usize>()));
            let mut page = Map::new();
            for (path, n) in files.iter().zip(&counts).skip(offset).take(limit) {
                page.insert(search.display.show(path), json!(n));
            }
            if !page.is_empty() {
                result.insert("counts".into(), Value::Object(page));
            }
        }
        _ => {
            page_info(&mut result, hits.len(), offset, limit);
            let page: Vec<&Hit> = hits.iter().skip(offset).take(limit).collect();
            render_matches(&mut result, search, &files, &page, context);
        }
    }
    result
}

/// The result of a walk that failed: its error, no matches.
fn search_failed(err: &dyn std::fmt::Display) -> Map<String, Value> {
    let mut result = Map::new();
    result.insert("error".into(), json!(format!("Search failed: {err}")));
    result.insert("total_count".into(), json!(0));
    result
}
