//! Text-file facts shared by the file tools: binary detection, the UTF-8 byte-order
//! mark, line endings, character-safe truncation, and a line scanner that streams a
//! file with bounded memory.

use std::io::{self, BufRead};
use std::path::Path;

/// Extensions that are never text (Hermes' list: images, media, archives, executables,
/// office documents, fonts, bytecode, databases, design files).
const BINARY_EXTENSIONS: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "bmp", "ico", "webp", "tiff", "tif", // images
    "mp4", "mov", "avi", "mkv", "webm", "wmv", "flv", "m4v", "mpeg", "mpg", // video
    "mp3", "wav", "ogg", "flac", "aac", "m4a", "wma", "aiff", "opus", // audio
    "zip", "tar", "gz", "bz2", "7z", "rar", "xz", "z", "tgz", "iso", // archives
    "exe", "dll", "so", "dylib", "bin", "o", "a", "obj", "lib", "app", "msi", "deb",
    "rpm", // executables
    "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "ods", "odp", // documents
    "ttf", "otf", "woff", "woff2", "eot", // fonts
    "pyc", "pyo", "class", "jar", "war", "ear", "node", "wasm", "rlib", // bytecode
    "sqlite", "sqlite3", "db", "mdb", "idx", // databases
    "psd", "ai", "eps", "sketch", "fig", "xd", "blend", "3ds", "max", // design
    "swf", "fla", "lockb", "dat", "data",
];

/// Image extensions (the error points at `vision_analyze` for these).
const IMAGE_EXTENSIONS: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "bmp", "ico", "webp", "tiff", "tif",
];

/// How many leading bytes are sniffed for binary content.
pub const SNIFF_BYTES: usize = 8 * 1024;

/// The UTF-8 byte-order mark.
pub const BOM: char = '\u{feff}';

/// The lowercase extension of `path` when it marks a binary format.
pub fn binary_extension(path: &Path) -> Option<String> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    BINARY_EXTENSIONS.contains(&ext.as_str()).then_some(ext)
}

/// True for image extensions.
pub fn is_image_extension(ext: &str) -> bool {
    IMAGE_EXTENSIONS.contains(&ext)
}

/// True when `sample` (the first bytes of a file) looks binary: a NUL byte, or more
/// than 30 % control characters other than tab, CR and LF in the first 1,000
/// characters.
pub fn looks_binary(sample: &[u8]) -> bool {
    if sample.contains(&0) {
        return true;
    }
    let text = String::from_utf8_lossy(sample);
    let mut total = 0usize;
    let mut control = 0usize;
    for c in text.chars().take(1000) {
        total += 1;
        if (c as u32) < 32 && !matches!(c, '\n' | '\r' | '\t') {
            control += 1;
        }
    }
    total > 0 && control * 100 > total * 30
}

/// `text` without a leading byte-order mark, and whether there was one.
pub fn strip_bom(text: &str) -> (&str, bool) {
    match text.strip_prefix(BOM) {
        Some(rest) => (rest, true),
        None => (text, false),
    }
}

/// The line ending of `text` judged from its first 4 KiB: `\r\n` if any CRLF appears,
/// `\n` if any LF does, `None` when there is no line break.
pub fn detect_line_ending(text: &str) -> Option<&'static str> {
    let mut end = text.len().min(4096);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let head = &text[..end];
    if head.contains("\r\n") {
        Some("\r\n")
    } else if head.contains('\n') {
        Some("\n")
    } else {
        None
    }
}

/// `text` with every line ending (CRLF, lone CR, LF) turned into `target`.
pub fn normalize_line_endings(text: &str, target: &str) -> String {
    let lf = text.replace("\r\n", "\n").replace('\r', "\n");
    if target == "\n" {
        lf
    } else {
        lf.replace('\n', target)
    }
}

/// The first `max` characters of `text`, and whether anything was cut.
pub fn truncate_chars(text: &str, max: usize) -> (&str, bool) {
    match text.char_indices().nth(max) {
        Some((cut, _)) => (&text[..cut], true),
        None => (text, false),
    }
}

/// The conventions of a text file that an edit must keep: CRLF line endings and a
/// byte-order mark. Edits work on LF text without a BOM (what `read_file` shows).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TextStyle {
    /// The file uses CRLF line endings.
    pub crlf: bool,
    /// The file starts with a UTF-8 byte-order mark.
    pub bom: bool,
}

impl TextStyle {
    /// Split file bytes into editable LF text and its style; `None` when the bytes are
    /// not UTF-8 (an edit would corrupt them).
    pub fn decode(bytes: &[u8]) -> Option<(String, TextStyle)> {
        let text = std::str::from_utf8(bytes).ok()?;
        let (text, bom) = strip_bom(text);
        let crlf = detect_line_ending(text) == Some("\r\n");
        let text = if crlf {
            normalize_line_endings(text, "\n")
        } else {
            text.to_string()
        };
        Some((text, TextStyle { crlf, bom }))
    }

    /// Turn edited LF text back into the file's style.
    pub fn encode(self, text: &str) -> String {
        let mut out = if self.crlf {
            normalize_line_endings(text, "\r\n")
        } else {
            text.to_string()
        };
        if self.bom {
            out.insert(0, BOM);
        }
        out
    }
}

/// `a/src/x.rs` for a relative path, `a/tmp/x` (not `a//tmp/x`) for an absolute one.
pub fn diff_label(side: &str, path: &str) -> String {
    format!("{side}/{}", path.trim_start_matches('/'))
}

/// A unified diff of `old` → `new` with the given header names (empty when equal).
pub fn unified_diff(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .header(old_name, new_name)
        .to_string()
}

/// Streams a reader line by line, keeping at most `keep_bytes` of each line, so a
/// multi-gigabyte file or a single enormous line never has to fit in memory.
pub struct LineScanner<R> {
    reader: R,
}

/// One line from a [`LineScanner`].
#[derive(Debug, Default)]
pub struct ScannedLine {
    /// The kept bytes (without the line break).
    pub bytes: Vec<u8>,
    /// True when the line was longer than what was kept.
    pub cut: bool,
}

impl<R: BufRead> LineScanner<R> {
    /// Scan `reader`.
    pub fn new(reader: R) -> Self {
        LineScanner { reader }
    }

    /// The underlying reader.
    pub fn into_inner(self) -> R {
        self.reader
    }

    /// The bytes buffered ahead without consuming them (at the start of a file: its
    /// head, for binary sniffing).
    pub fn peek(&mut self) -> io::Result<&[u8]> {
        self.reader.fill_buf()
    }

    /// The next line; `keep_bytes = 0` skips a line cheaply. `None` at the end.
    pub fn next_line(&mut self, keep_bytes: usize) -> io::Result<Option<ScannedLine>> {
        let mut line = ScannedLine::default();
        let mut saw_any = false;
        loop {
            let buf = match self.reader.fill_buf() {
                Ok(buf) => buf,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err),
            };
            if buf.is_empty() {
                break;
            }
            saw_any = true;
            let (chunk, found_newline) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (&buf[..i], true),
                None => (buf, false),
            };
            let room = keep_bytes.saturating_sub(line.bytes.len());
            if chunk.len() > room {
                line.cut = true;
            }
            line.bytes
                .extend_from_slice(&chunk[..chunk.len().min(room)]);
            let used = chunk.len() + usize::from(found_newline);
            self.reader.consume(used);
            if found_newline {
                break;
            }
        }
        if !saw_any {
            return Ok(None);
        }
        if line.bytes.last() == Some(&b'\r') && !line.cut {
            line.bytes.pop();
        }
        Ok(Some(line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_detection() {
        assert!(looks_binary(b"abc\0def"));
        assert!(looks_binary(&[1u8, 2, 3, 4, 5, 6, b'a']));
        assert!(!looks_binary(b"fn main() {\n\tprintln!(\"hi\");\r\n}\n"));
        assert!(!looks_binary("héllo wörld ✓".as_bytes()));
        assert!(!looks_binary(b""));
    }

    #[test]
    fn binary_extensions() {
        assert_eq!(
            binary_extension(Path::new("/a/logo.PNG")).as_deref(),
            Some("png")
        );
        assert!(binary_extension(Path::new("main.rs")).is_none());
        assert!(binary_extension(Path::new("Makefile")).is_none());
    }

    #[test]
    fn line_endings() {
        assert_eq!(detect_line_ending("a\r\nb\r\n"), Some("\r\n"));
        assert_eq!(detect_line_ending("a\nb"), Some("\n"));
        assert_eq!(detect_line_ending("single"), None);
        assert_eq!(
            normalize_line_endings("a\r\nb\nc\rd", "\r\n"),
            "a\r\nb\r\nc\r\nd"
        );
        assert_eq!(normalize_line_endings("a\r\nb", "\n"), "a\nb");
    }

    #[test]
    fn text_style_round_trip() {
        let (text, style) = TextStyle::decode("\u{feff}a\r\nb\r\n".as_bytes()).unwrap();
        assert_eq!(text, "a\nb\n");
        assert_eq!(
            style,
            TextStyle {
                crlf: true,
                bom: true
            }
        );
        assert_eq!(style.encode("x\ny\n"), "\u{feff}x\r\ny\r\n");
        assert!(TextStyle::decode(b"\xff\xfe bad").is_none());
    }

    #[test]
    fn diff_has_headers() {
        let d = unified_diff("a\nb\n", "a\nc\n", "a/f", "b/f");
        assert!(d.starts_with("--- a/f\n+++ b/f\n"), "{d}");
        assert!(d.contains("-b\n+c\n"), "{d}");
    }

    #[test]
    fn truncation_respects_char_boundaries() {
        assert_eq!(truncate_chars("héllo", 2), ("hé", true));
        assert_eq!(truncate_chars("abc", 3), ("abc", false));
    }

    #[test]
    fn scanner_bounds_long_lines_and_strips_cr() {
        let data = b"short\r\nloooooooong\nlast".to_vec();
        let mut scanner = LineScanner::new(io::BufReader::with_capacity(4, &data[..]));
        let l1 = scanner.next_line(100).unwrap().unwrap();
        assert_eq!(l1.bytes, b"short");
        let l2 = scanner.next_line(4).unwrap().unwrap();
        assert_eq!((l2.bytes.as_slice(), l2.cut), (&b"looo"[..], true));
        let l3 = scanner.next_line(0).unwrap().unwrap();
        assert!(l3.bytes.is_empty());
        assert!(scanner.next_line(10).unwrap().is_none());
    }
}
