//! Bounded output capture: keeps a head (40 %) and a rolling tail (60 %) of a command's
//! output in memory, and — unlike Hermes, whose terminal output loses its middle for
//! good — streams the *full* output to a spill file as soon as it outgrows the limit, so
//! the model can page through everything with `read_file`.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use toolhost_text::thousands;

/// Where the full output goes once it exceeds the in-memory limit.
#[derive(Clone, Debug)]
pub struct SpillTarget {
    /// Directory of spill files (created on first use).
    pub dir: PathBuf,
    /// File name stem (`terminal-<task>-<id>`).
    pub stem: String,
    /// Largest spill file; beyond it the file is cut and says so.
    pub max_bytes: u64,
}

/// A head + rolling tail of a byte stream, optionally spilling everything to a file.
#[derive(Debug)]
pub struct OutputCapture {
    limit: usize,
    head_limit: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    tail_limit: usize,
    total: u64,
    spill_target: Option<SpillTarget>,
    spill: Option<(PathBuf, File, u64)>,
    spill_failed: Option<String>,
}

/// The rendered result of a capture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CapturedOutput {
    /// The text (head, omission marker, tail when truncated).
    pub text: String,
    /// Bytes the command printed in total.
    pub total_bytes: u64,
    /// True when the middle was left out of `text`.
    pub truncated: bool,
    /// The file holding the full output, when it was spilled.
    pub full_output_path: Option<PathBuf>,
}

impl OutputCapture {
    /// Keep at most `limit` bytes in memory; spill to `spill` beyond that.
    pub fn new(limit: usize, spill: Option<SpillTarget>) -> Self {
        let limit = limit.max(16);
        let head_limit = limit * 2 / 5;
        OutputCapture {
            limit,
            head_limit,
            head: Vec::new(),
            tail: VecDeque::new(),
            tail_limit: limit - head_limit,
            total: 0,
            spill_target: spill,
            spill: None,
            spill_failed: None,
        }
    }

    /// Keep everything (internal consumers such as file reads).
    pub fn unbounded() -> Self {
        OutputCapture::new(usize::MAX / 4, None)
    }

    /// Bytes seen so far.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Append a chunk.
    pub fn push(&mut self, mut chunk: &[u8]) {
        if chunk.is_empty() {
            return;
        }
        self.total += chunk.len() as u64;
        if self.total > self.limit as u64 && self.spill.is_none() && self.spill_failed.is_none() {
            // Everything seen so far is still in memory: start the spill file with it.
            self.open_spill();
        }
        if let Some((_, file, written)) = &mut self.spill {
            let target_max = self.spill_target.as_ref().map_or(0, |t| t.max_bytes);
            let room = target_max.saturating_sub(*written) as usize;
            let part = &chunk[..chunk.len().min(room)];
            if !part.is_empty() {
                if let Err(err) = file.write_all(part) {
                    self.spill_failed = Some(err.to_string());
                    self.spill = None;
                } else {
                    *written += part.len() as u64;
                }
            }
        }
        if self.head.len() < self.head_limit {
            let take = (self.head_limit - self.head.len()).min(chunk.len());
            self.head.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
        if chunk.len() >= self.tail_limit {
            self.tail.clear();
            self.tail
                .extend(chunk[chunk.len() - self.tail_limit..].iter().copied());
        } else {
            self.tail.extend(chunk.iter().copied());
            let excess = self.tail.len().saturating_sub(self.tail_limit);
            self.tail.drain(..excess);
        }
    }

    fn open_spill(&mut self) {
        let Some(target) = &self.spill_target else {
            return;
        };
        let path = target.dir.join(format!("{}.log", target.stem));
        let opened = std::fs::create_dir_all(&target.dir).and_then(|()| File::create(&path));
        match opened {
            Ok(mut file) => {
                let mut written = 0u64;
                let (a, b) = self.tail.as_slices();
                for part in [&self.head[..], a, b] {
                    if file.write_all(part).is_err() {
                        self.spill_failed = Some(format!("cannot write {}", path.display()));
                        return;
                    }
                    written += part.len() as u64;
                }
                self.spill = Some((path, file, written));
            }
            Err(err) => {
                tracing::warn!(path = %path.display(), %err, "cannot create spill file");
                self.spill_failed = Some(err.to_string());
            }
        }
    }

    /// The retained bytes (head + tail) when nothing was dropped, for raw consumers.
    pub fn into_bytes(self) -> Vec<u8> {
        let mut out = self.head;
        out.extend(self.tail);
        out
    }

    /// Remove the last `n` bytes of the stream (the wrapper's cwd report), from the tail
    /// and from the spill file.
    pub fn cut_end(&mut self, n: usize) {
        let n = n.min(self.tail.len() + self.head.len());
        let from_tail = n.min(self.tail.len());
        self.tail.truncate(self.tail.len() - from_tail);
        let from_head = n - from_tail;
        self.head.truncate(self.head.len() - from_head);
        self.total = self.total.saturating_sub(n as u64);
        if let Some((_, file, written)) = &mut self.spill
            && *written > self.total
        {
            let _ = file.set_len(self.total);
            *written = self.total;
        }
    }

    /// The last (at most) `max` retained bytes of the stream, for parsing the wrapper's
    /// report.
    pub fn end_bytes(&self, max: usize) -> Vec<u8> {
        let from_tail = self.tail.len().min(max);
        let from_head = (max - from_tail).min(self.head.len());
        let mut out = self.head[self.head.len() - from_head..].to_vec();
        out.extend(self.tail.iter().skip(self.tail.len() - from_tail));
        out
    }

    /// Render: everything when it fits, else head + omission marker + tail. `suffix`
    /// (a timeout/interrupt note) is always kept.
    pub fn finish(mut self, suffix: &str) -> CapturedOutput {
        let truncated = self.total > self.limit as u64;
        let spill_path = match self.spill.take() {
            Some((path, mut file, written)) => {
                if written < self.total {
                    let _ = writeln!(
                        file,
                        "\n[spill file cut at {written} bytes of {} total]",
                        self.total
                    );
                }
                let _ = file.flush();
                Some(path)
            }
            None => None,
        };
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let text = if !truncated {
            let mut all = self.head;
            all.extend_from_slice(&tail);
            format!("{}{suffix}", String::from_utf8_lossy(&all))
        } else {
            let head = utf8_prefix(&self.head);
            let tail_text = utf8_suffix(&tail);
            let omitted = self
                .total
                .saturating_sub((self.head.len() + tail.len()) as u64);
            let saved = match (&spill_path, &self.spill_failed) {
                (Some(path), _) => format!(
                    " Full output saved on the toolhost host to {} (page through it with read_file offset/limit).",
                    path.display()
                ),
                (None, Some(err)) => format!(" The full output could not be saved: {err}."),
                (None, None) => String::new(),
            };
            format!(
                "{head}\n\n... [OUTPUT TRUNCATED - {} bytes omitted out of {} total.{saved}] ...\n\n{tail_text}{suffix}",
                thousands(omitted),
                thousands(self.total),
            )
        };
        CapturedOutput {
            text,
            total_bytes: self.total,
            truncated,
            full_output_path: spill_path,
        }
    }
}

/// The longest valid UTF-8 prefix (a cut code point at the end is dropped).
fn utf8_prefix(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(e) if e.error_len().is_none() => {
            String::from_utf8_lossy(&bytes[..e.valid_up_to()]).into_owned()
        }
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

/// The bytes without leading UTF-8 continuation bytes (a code point cut at the start).
fn utf8_suffix(bytes: &[u8]) -> String {
    let skip = bytes
        .iter()
        .take(3)
        .take_while(|b| (**b & 0xC0) == 0x80)
        .count();
    String::from_utf8_lossy(&bytes[skip..]).into_owned()
}

/// True when `path` is a spill file (for tests and housekeeping).
pub fn is_spill_file(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "log")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_output_is_kept_whole() {
        let mut c = OutputCapture::new(100, None);
        c.push(b"hello ");
        c.push(b"world");
        let out = c.finish("");
        assert_eq!(out.text, "hello world");
        assert!(!out.truncated);
        assert_eq!(out.total_bytes, 11);
    }

    #[test]
    fn big_output_keeps_head_and_tail_and_spills_everything() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = OutputCapture::new(
            100,
            Some(SpillTarget {
                dir: dir.path().join("results"),
                stem: "t".into(),
                max_bytes: 1 << 20,
            }),
        );
        let full: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        for chunk in full.as_bytes().chunks(7) {
            c.push(chunk);
        }
        let out = c.finish("\n[Command timed out after 1s]");
        assert!(out.truncated);
        assert!(out.text.starts_with("line 0\nline 1\n"), "{}", out.text);
        assert!(out.text.contains("OUTPUT TRUNCATED"));
        assert!(
            out.text
                .contains("line 999\n\n[Command timed out after 1s]")
        );
        let path = out.full_output_path.unwrap();
        assert!(out.text.contains(&path.display().to_string()));
        assert_eq!(std::fs::read_to_string(path).unwrap(), full);
    }

    #[test]
    fn cut_end_trims_tail_and_spill() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = OutputCapture::new(
            20,
            Some(SpillTarget {
                dir: dir.path().to_path_buf(),
                stem: "cut".into(),
                max_bytes: 1 << 20,
            }),
        );
        c.push(b"0123456789abcdefghijklmnopqrstuvwxyzMARK");
        c.cut_end(4);
        let out = c.finish("");
        assert!(out.text.ends_with("wxyz"), "{}", out.text);
        assert_eq!(
            std::fs::read_to_string(out.full_output_path.unwrap()).unwrap(),
            "0123456789abcdefghijklmnopqrstuvwxyz"
        );
    }

    #[test]
    fn utf8_boundaries_are_respected() {
        let mut c = OutputCapture::new(20, None);
        c.push("ééééééééééééééééééééééééééééé".as_bytes());
        let out = c.finish("");
        assert!(!out.text.contains('\u{fffd}'), "{}", out.text);
    }
}
