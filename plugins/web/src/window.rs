//! The head + tail window of a long page: what the model sees of a page over its
//! character budget, with the full text saved to a file it can page through with
//! `read_file` (the same contract as Hermes' `web_extract`, see docs/hermes/web.md).

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

/// The text to send for `content`, and whether it was cut.
pub fn window(content: &str, url: &str, char_limit: usize, cache_dir: &Path) -> (String, bool) {
    let total = content.chars().count();
    if total <= char_limit {
        return (content.to_string(), false);
    }
    let head_budget = char_limit * 3 / 4;
    let tail_budget = char_limit - head_budget;
    let mut head: &str = prefix(content, head_budget);
    let mut tail: &str = suffix(content, tail_budget);
    // Cut on line boundaries when one is near.
    if let Some(nl) = head.rfind('\n').filter(|&nl| nl > head.len() / 2) {
        head = &head[..nl];
    }
    if let Some(nl) = tail.find('\n').filter(|&nl| nl < tail.len() / 2) {
        tail = &tail[nl + 1..];
    }
    let head_chars = head.chars().count();
    let tail_chars = tail.chars().count();
    let rule = "─".repeat(8);
    let mut text = format!(
        "{head}\n\n[... middle omitted — see footer ...]\n\n{tail}\n\n{rule} [TRUNCATED] {rule}\n\
         Showing {head_chars} chars (head) + {tail_chars} chars (tail) of {total} total clean characters.\n"
    );
    match store(content, url, cache_dir) {
        Ok(path) => {
            let line = head.matches('\n').count() + 2;
            let path = path.display();
            text.push_str(&format!(
                "Full text saved to: {path}\nTo read the omitted middle: read_file path=\"{path}\" \
                 offset={line} limit=200 (the file is the complete page).\n"
            ));
        }
        Err(e) => text.push_str(&format!(
            "The full text could not be saved ({e}); call web_extract with a larger char_limit.\n"
        )),
    }
    text.push_str(&"─".repeat(29));
    (text, true)
}

fn prefix(text: &str, chars: usize) -> &str {
    text.char_indices()
        .nth(chars)
        .map_or(text, |(i, _)| &text[..i])
}

fn suffix(text: &str, chars: usize) -> &str {
    let total = text.chars().count();
    text.char_indices()
        .nth(total.saturating_sub(chars))
        .map_or("", |(i, _)| &text[i..])
}

/// Save the full text under `cache_dir`, named after the URL.
fn store(content: &str, url: &str, cache_dir: &Path) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(cache_dir)?;
    let mut hasher = DefaultHasher::new();
    url.hash(&mut hasher);
    content.len().hash(&mut hasher);
    let host: String = url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '_'
            }
        })
        .take(60)
        .collect();
    let path = cache_dir.join(format!("{host}-{:016x}.md", hasher.finish()));
    std::fs::write(&path, content)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_whole() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            window("abc", "https://e.com", 2000, dir.path()),
            ("abc".to_string(), false)
        );
    }

    #[test]
    fn long_text_keeps_head_and_tail_and_saves_the_whole() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (0..2000).map(|n| format!("line {n} é\n")).collect();
        let (shown, cut) = window(&text, "https://e.com/a", 2000, dir.path());
        assert!(cut);
        assert!(shown.starts_with("line 0 é\n"));
        assert!(shown.contains("line 1999 é"));
        assert!(!shown.contains("line 1000 é"));
        let path = shown
            .split("Full text saved to: ")
            .nth(1)
            .unwrap()
            .lines()
            .next()
            .unwrap();
        assert_eq!(std::fs::read_to_string(path).unwrap(), text);
    }
}
