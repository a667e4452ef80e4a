//! Comment boundaries: in bash `#` starts a comment only at the start of a word. A `#`
//! right after the `)` that closes a process substitution (`<(...)`, `>(...)`) or a
//! command substitution is inside that word (`cat <(echo a)#; rm -rf /` runs `rm`), while
//! after a subshell's `)` it does start a comment. The parser reads some of these as
//! comments; [`escape_word_hashes`] gives the text with those `#` escaped, which the
//! analyser reads too (fail closed: both readings count).

/// `text` with every `#` that directly follows the closing `)` of a `$(`, `<(` or `>(`
/// escaped (`\#`), or `None` when there is none.
pub(crate) fn escape_word_hashes(text: &str) -> Option<String> {
    if !text.as_bytes().contains(&b'#') || !text.contains(")#") {
        return None;
    }
    let bytes = text.as_bytes();
    // Per open parenthesis: whether it opened a substitution (a word part).
    let mut stack: Vec<bool> = Vec::new();
    let mut marks: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1,
            b'\'' => {
                // Single quotes: nothing inside is syntax.
                i += 1;
                while i < bytes.len() && bytes[i] != b'\'' {
                    i += 1;
                }
            }
            b'(' => {
                let word_part = i > 0 && matches!(bytes[i - 1], b'$' | b'<' | b'>');
                stack.push(word_part);
            }
            b')' if stack.pop() == Some(true) && bytes.get(i + 1) == Some(&b'#') => {
                marks.push(i + 1);
            }
            _ => {}
        }
        i += 1;
    }
    if marks.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len() + marks.len());
    let mut last = 0;
    for m in marks {
        out.push_str(&text[last..m]);
        out.push('\\');
        last = m;
    }
    out.push_str(&text[last..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::escape_word_hashes;

    #[test]
    fn only_hashes_closing_a_substitution_word() {
        let cases: &[(&str, Option<&str>)] = &[
            (
                "cat <(echo a)#; rm -rf /",
                Some("cat <(echo a)\\#; rm -rf /"),
            ),
            ("echo $(date)#x", Some("echo $(date)\\#x")),
            ("tee >(wc)#", Some("tee >(wc)\\#")),
            ("(echo hi)#; rm -rf /", None),
            ("echo ')#'", None),
            ("f() (echo)#x", None),
            ("echo hi # note", None),
        ];
        for (text, want) in cases {
            assert_eq!(escape_word_hashes(text).as_deref(), *want, "{text:?}");
        }
    }
}
