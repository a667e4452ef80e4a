//! Strip ANSI escape sequences (colours, cursor movement, OSC titles) from terminal
//! output before the model sees it.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

static ANSI: LazyLock<Option<Regex>> = LazyLock::new(|| {
    // CSI (ESC [ ... final), OSC (ESC ] ... BEL or ESC \), other two-byte escapes, and
    // the 8-bit CSI form.
    Regex::new(
        r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[PX^_][^\x1b]*\x1b\\|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]",
    )
    .map_err(|err| tracing::error!(%err, "ANSI pattern does not compile"))
    .ok()
});

/// `text` without ANSI escape sequences; carriage returns of `\r\n` become `\n`.
pub fn strip_ansi(text: &str) -> Cow<'_, str> {
    let stripped = match ANSI.as_ref() {
        Some(re) if text.contains('\x1b') || text.contains('\u{9b}') => re.replace_all(text, ""),
        _ => Cow::Borrowed(text),
    };
    if stripped.contains("\r\n") {
        Cow::Owned(stripped.replace("\r\n", "\n"))
    } else {
        stripped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_sequences() {
        let cases = [
            ("\x1b[31mred\x1b[0m", "red"),
            ("\x1b[1;32mok\x1b[m done", "ok done"),
            ("\x1b]0;title\x07prompt$ ", "prompt$ "),
            ("a\x1b[2Kb\x1b[1Ac", "abc"),
            ("line\r\nnext", "line\nnext"),
            ("plain", "plain"),
        ];
        for (input, want) in cases {
            assert_eq!(strip_ansi(input), want, "{input:?}");
        }
    }
}
