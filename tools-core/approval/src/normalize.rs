//! De-obfuscation applied to the raw text before it is parsed.
//!
//! The shell parser already undoes quoting tricks (`r''m`, `\rm`, line continuations); this
//! step removes what a parser would keep but a terminal hides: ANSI/ECMA-48 escape
//! sequences and C1 controls (`toolhost_text::strip_ansi`, the reading terminal output
//! gets too), other controls, NULs, zero-width characters and carriage returns, and folds
//! compatibility characters (fullwidth `ｒｍ`) with Unicode NFKC. Plain ASCII text without
//! control characters (the common case) is returned borrowed, untouched.

use std::borrow::Cow;

use toolhost_text::strip_ansi;
use unicode_normalization::UnicodeNormalization;

/// True when `text` needs no normalisation.
fn is_plain(text: &str) -> bool {
    text.bytes()
        .all(|b| (0x20..0x7f).contains(&b) || b == b'\n' || b == b'\t')
}

/// Characters that render as nothing (or nearly) and are dropped.
fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}' | '\u{200B}'..='\u{200F}' | '\u{2060}'..='\u{2064}' | '\u{FEFF}' | '\u{180E}'
    ) || ('\u{80}'..='\u{9f}').contains(&c)
}

/// Remove escape sequences, controls and invisible characters; fold with NFKC.
pub(crate) fn normalize(text: &str) -> Cow<'_, str> {
    if is_plain(text) {
        return Cow::Borrowed(text);
    }
    let stripped = strip_ansi(text);
    let mut out = String::with_capacity(stripped.len());
    for c in stripped.chars() {
        match c {
            '\r' | '\0' => {}
            c if c.is_control() && c != '\n' && c != '\t' => {}
            c if is_invisible(c) => {}
            c => out.push(c),
        }
    }
    if out.is_ascii() {
        return Cow::Owned(out);
    }
    let folded: String = out.nfkc().filter(|c| !is_invisible(*c)).collect();
    Cow::Owned(folded)
}

/// True when normalisation changed more than carriage returns: bash keeps escape bytes,
/// control characters, invisible characters and fullwidth or look-alike punctuation as
/// ordinary characters of a word, so the normalised reading and bash's can differ.
pub(crate) fn is_ambiguous(raw: &str, normalized: &str) -> bool {
    let mut a = raw.chars().filter(|c| *c != '\r');
    let mut b = normalized.chars();
    loop {
        match (a.next(), b.next()) {
            (None, None) => return false,
            (x, y) if x == y => {}
            _ => return true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed() {
        assert!(matches!(normalize("ls -la | wc -l"), Cow::Borrowed(_)));
    }

    #[test]
    fn ambiguity_ignores_carriage_returns_only() {
        let cases = [
            ("ls\r\n", false),
            ("echo héllo", false),
            ("echo ✓", false),
            ("\u{1b}[31mrm\u{1b}[0m", true),
            ("ｒｍ", true),
            ("echo a\u{a0}b", true),
            ("echo x；rm y", true),
            ("r\u{200b}m", true),
        ];
        for (raw, want) in cases {
            assert_eq!(is_ambiguous(raw, &normalize(raw)), want, "{raw:?}");
        }
    }

    #[test]
    fn strips_obfuscation() {
        let cases = [
            ("\u{1b}[31mrm\u{1b}[0m -rf /", "rm -rf /"),
            ("r\u{1b}]0;title\u{7}m -rf /", "rm -rf /"),
            ("ｒｍ －ｒｆ ／", "rm -rf /"),
            ("r\u{200b}m -rf /", "rm -rf /"),
            ("rm\0 -rf /", "rm -rf /"),
            ("rm -rf /\r\n", "rm -rf /\n"),
            ("r\u{9b}1mm", "rm"),
        ];
        for (input, want) in cases {
            assert_eq!(normalize(input), want, "{input:?}");
        }
    }
}
