//! ANSI-C quoting: the body of `$'...'` decoded the way bash does (`\x72` → `r`,
//! `\162` → `r`, `\u0072`, `\e`, `\cX`), for words, `echo -e` and `printf` formats.

/// Decode the body of `$'...'`.
pub(crate) fn decode_ansi_c(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        let mut take_digits = |radix: u32, max: usize, first: Option<char>| {
            let mut value = 0u32;
            let mut count = 0;
            if let Some(d) = first.and_then(|d| d.to_digit(radix)) {
                value = d;
                count = 1;
            }
            while count < max {
                match chars.peek().and_then(|d| d.to_digit(radix)) {
                    Some(d) => {
                        value = value * radix + d;
                        chars.next();
                        count += 1;
                    }
                    None => break,
                }
            }
            char::from_u32(value)
        };
        let decoded = match e {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'e' | 'E' => Some('\u{1b}'),
            'f' => Some('\u{c}'),
            'v' => Some('\u{b}'),
            '\\' | '\'' | '"' | '?' => Some(e),
            'x' => take_digits(16, 2, None),
            'u' => take_digits(16, 4, None),
            'U' => take_digits(16, 8, None),
            '0'..='7' => take_digits(8, 3, Some(e)),
            'c' => chars.next().map(|c| ((c as u8) & 0x1f) as char),
            other => {
                out.push('\\');
                Some(other)
            }
        };
        if let Some(d) = decoded {
            out.push(d);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_c_decoding() {
        assert_eq!(decode_ansi_c(r"\x72\x6d"), "rm");
        assert_eq!(decode_ansi_c(r"\162\155"), "rm");
        assert_eq!(decode_ansi_c(r"\u0072m"), "rm");
        assert_eq!(decode_ansi_c(r"a\nb"), "a\nb");
    }
}
