//! Removing ANSI/ECMA-48 escape sequences: colours, cursor movement, window titles and the
//! other control strings a terminal acts on but never shows.
//!
//! Two readers need this and read it the same way: terminal and code-execution output
//! (escape codes in the model's context end up copied into files it writes) and the
//! approval analyser (a command must be judged as the terminal would show it). The
//! grammar is Hermes' (`tools/ansi_strip.py`, docs/hermes/terminal.md): after ESC a CSI
//! (`[`, parameter bytes `0x30–0x3F`, intermediates `0x20–0x2F`, a final `0x40–0x7E`), an
//! OSC (`]` … BEL or `ESC \`), a DCS/SOS/PM/APC string (`P X ^ _` … `ESC \`), an nF escape
//! (intermediates then a final `0x30–0x7E`) or a single final byte; the 8-bit CSI
//! (`U+009B`) and OSC (`U+009D` … BEL or `U+009C`); and every other C1 control. A string
//! without its terminator is not a sequence: only its introducer goes, the text after it
//! stays visible. A lone ESC that starts nothing stays too. toolhost additionally folds
//! `\r\n` to `\n` (PTY output).

use std::borrow::Cow;

const ESC: char = '\u{1b}';
const BEL: u8 = 0x07;
/// 8-bit CSI, OSC and string terminator.
const CSI8: char = '\u{9b}';
const OSC8: char = '\u{9d}';
const ST8: char = '\u{9c}';

fn is_c1(c: char) -> bool {
    ('\u{80}'..='\u{9f}').contains(&c)
}

/// `text` without ANSI escape sequences and C1 controls; `\r\n` becomes `\n`. Text without
/// any of them is returned borrowed.
pub fn strip_ansi(text: &str) -> Cow<'_, str> {
    let starts = |c: char| c == ESC || c == '\r' || is_c1(c);
    if !text.contains(starts) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(starts) {
        out.push_str(&rest[..at]);
        let Some(c) = rest[at..].chars().next() else {
            break;
        };
        let after = &rest[at + c.len_utf8()..];
        // Bytes of `after` that belong to the sequence; `None`: `c` is kept.
        let body = match c {
            ESC => escape(after),
            '\r' if after.starts_with('\n') => Some(0),
            '\r' => None,
            CSI8 => Some(csi(after).unwrap_or(0)),
            OSC8 => Some(osc8(after).unwrap_or(0)),
            _ => Some(0),
        };
        match body {
            Some(len) => rest = &after[len..],
            None => {
                out.push(c);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// The sequence after an ESC, in the order Hermes' alternation tries them.
fn escape(after: &str) -> Option<usize> {
    let first = *after.as_bytes().first()?;
    let full = match first {
        b'[' => csi(&after[1..]).map(|n| n + 1),
        b']' => osc(&after[1..]).map(|n| n + 1),
        b'P' | b'X' | b'^' | b'_' => string(&after[1..]).map(|n| n + 1),
        0x20..=0x2f => {
            let n = intermediates(after);
            return matches!(after.as_bytes().get(n), Some(0x30..=0x7e)).then_some(n + 1);
        }
        _ => None,
    };
    full.or_else(|| (0x30..=0x7e).contains(&first).then_some(1))
}

fn intermediates(s: &str) -> usize {
    s.bytes().take_while(|b| (0x20..=0x2f).contains(b)).count()
}

/// CSI after its introducer: parameters, intermediates, one final byte.
fn csi(s: &str) -> Option<usize> {
    let params = s.bytes().take_while(|b| (0x30..=0x3f).contains(b)).count();
    let n = params + intermediates(&s[params..]);
    matches!(s.as_bytes().get(n), Some(0x40..=0x7e)).then_some(n + 1)
}

/// OSC after `ESC ]`: up to the first BEL or `ESC \`.
fn osc(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    bytes.iter().enumerate().find_map(|(i, &b)| match b {
        BEL => Some(i + 1),
        0x1b if bytes.get(i + 1) == Some(&b'\\') => Some(i + 2),
        _ => None,
    })
}

/// DCS/SOS/PM/APC after their introducer: up to the first `ESC \`.
fn string(s: &str) -> Option<usize> {
    s.find("\u{1b}\\").map(|i| i + 2)
}

/// 8-bit OSC after `U+009D`: up to the first BEL or `U+009C`.
fn osc8(s: &str) -> Option<usize> {
    s.char_indices()
        .find(|&(_, c)| c == '\u{7}' || c == ST8)
        .map(|(i, c)| i + c.len_utf8())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_sequences() {
        let cases = [
            ("\x1b[31mred\x1b[0m", "red"),
            ("\x1b[1;32mok\x1b[m done", "ok done"),
            ("\x1b[?25l\x1b[38:5:1mx", "x"),
            ("\x1b]0;title\x07prompt$ ", "prompt$ "),
            ("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),
            ("a\x1b[2Kb\x1b[1Ac", "abc"),
            ("\x1bP1$r0m\x1b\\after", "after"),
            ("\x1b(Bcharset", "charset"),
            ("\x1b7saved\x1b8", "saved"),
            ("\u{9b}31mred\u{9b}0m", "red"),
            ("\u{9d}title\u{9c}text", "text"),
            ("c1\u{85}gone", "c1gone"),
            ("line\r\nnext", "line\nnext"),
            ("plain", "plain"),
        ];
        for (input, want) in cases {
            assert_eq!(strip_ansi(input), want, "{input:?}");
        }
    }

    #[test]
    fn unterminated_strings_lose_only_their_introducer() {
        let cases = [
            ("\x1b]0;rm -rf /", "0;rm -rf /"),
            ("\x1bPno end", "no end"),
            ("\u{9d}no end", "no end"),
            ("\x1b[1\nx", "1\nx"),
        ];
        for (input, want) in cases {
            assert_eq!(strip_ansi(input), want, "{input:?}");
        }
    }

    #[test]
    fn a_lone_escape_and_a_lone_carriage_return_stay() {
        assert_eq!(strip_ansi("end\x1b"), "end\x1b");
        assert_eq!(strip_ansi("a\x1b\nb"), "a\x1b\nb");
        assert_eq!(strip_ansi("50%\r100%"), "50%\r100%");
    }

    #[test]
    fn clean_text_is_borrowed() {
        assert!(matches!(strip_ansi("ls -la ü"), Cow::Borrowed(_)));
    }

    proptest::proptest! {
        #[test]
        fn never_panics_and_never_grows(text in "(\\PC|[\\x1b\\x07\\r\\n\\[\\]\\\\P\u{9b}\u{9c}\u{9d}])*") {
            let out = strip_ansi(&text);
            proptest::prop_assert!(out.len() <= text.len());
        }

    }
}
