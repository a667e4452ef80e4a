//! The fast front-end: an exact, allocation-light reader for the plain subset of shell that
//! most agent commands are written in — words, single quotes, double quotes without
//! expansions, pipes, `&&`, `||`, `;`, `&`, newlines, comments and simple file
//! redirections. Anything else (any `$`, backtick, backslash, parenthesis, brace, `!`,
//! heredoc, glob in command position, reserved word, non-ASCII or control byte, or a
//! syntax error) makes it return `None`, and the full shell parser takes over.
//!
//! Why this is sound: inside the subset the shell's reading of the text is fully
//! determined (no expansion can change a word, no construct can hide a command), so this
//! reader produces exactly the commands the full parser would, and the same rules then run
//! on them. A differential test (`fastpath_matches_parser`) checks that claim on the
//! benchmark corpus and on generated commands.

use std::borrow::Cow;

use super::model::{Arg, Cmd, Input};

/// Pipelines (each a list of stages) in order, or `None` when the text is outside the
/// subset.
pub(crate) fn parse(text: &str) -> Option<Vec<Vec<Cmd<'_>>>> {
    let bytes = text.as_bytes();
    let mut pipelines: Vec<Vec<Cmd<'_>>> = Vec::new();
    let mut pipeline: Vec<Cmd<'_>> = Vec::new();
    let mut cmd = Cmd::default();
    let mut has_prefix = false; // assignments before the command word
    // A command is required next (after `|`, `&&`, `||`).
    let mut need_command = false;
    let mut i = 0;
    let n = bytes.len();

    macro_rules! end_command {
        () => {{
            if cmd.args.is_empty() && cmd.writes.is_empty() && cmd.input.is_none() && !has_prefix {
                return None;
            }
            pipeline.push(std::mem::take(&mut cmd));
            has_prefix = false;
        }};
    }

    while i < n {
        let b = bytes[i];
        match b {
            b' ' | b'\t' => i += 1,
            b'\n' | b';' | b'&'
                if !(b == b'&' && matches!(bytes.get(i + 1), Some(b'&') | Some(b'>'))) =>
            {
                let empty = cmd.args.is_empty()
                    && cmd.writes.is_empty()
                    && cmd.input.is_none()
                    && !has_prefix;
                if empty {
                    // A newline may end a blank line or follow `|`, `&&`, `||`; a `;` or `&`
                    // with no command before it is a syntax error.
                    if b == b'\n' && (pipeline.is_empty() || need_command) {
                        i += 1;
                        continue;
                    }
                    return None;
                }
                end_command!();
                pipelines.push(std::mem::take(&mut pipeline));
                need_command = false;
                i += 1;
            }
            b'&' if bytes.get(i + 1) == Some(&b'&') => {
                end_command!();
                pipelines.push(std::mem::take(&mut pipeline));
                need_command = true;
                i += 2;
            }
            b'|' => {
                if bytes.get(i + 1) == Some(&b'&') {
                    return None;
                }
                end_command!();
                if bytes.get(i + 1) == Some(&b'|') {
                    pipelines.push(std::mem::take(&mut pipeline));
                    i += 2;
                } else {
                    i += 1;
                }
                need_command = true;
            }
            b'#' => {
                while i < n && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'<' | b'>' => {
                i = redirect(bytes, text, i, &mut cmd)?;
                need_command = false;
            }
            b'&' => {
                // `&>` / `&>>`
                i = redirect(bytes, text, i, &mut cmd)?;
                need_command = false;
            }
            _ => {
                // fd number directly before a redirection: `2>`, `2>&1`.
                let digits = bytes[i..].iter().take_while(|b| b.is_ascii_digit()).count();
                if digits > 0 && matches!(bytes.get(i + digits), Some(b'<') | Some(b'>')) {
                    i = redirect(bytes, text, i + digits, &mut cmd)?;
                    need_command = false;
                    continue;
                }
                let (word, raw, next) = read_word(bytes, text, i)?;
                i = next;
                need_command = false;
                if cmd.args.is_empty() {
                    if is_assignment(raw) {
                        let name = raw.split(['=', '+']).next().unwrap_or_default();
                        if super::env_vars::carries_code(name) || name == "IFS" {
                            // Judged by the full parser (see `env_vars`).
                            return None;
                        }
                        has_prefix = true;
                        continue;
                    }
                    if is_reserved(raw) || raw.contains(['*', '?', '[', '~', '=']) {
                        return None;
                    }
                }
                cmd.args.push(Arg::literal(word));
            }
        }
    }
    if need_command {
        return None;
    }
    if !(cmd.args.is_empty() && cmd.writes.is_empty() && cmd.input.is_none() && !has_prefix) {
        pipeline.push(cmd);
    }
    if !pipeline.is_empty() {
        pipelines.push(pipeline);
    }
    Some(pipelines)
}

fn is_reserved(word: &str) -> bool {
    matches!(
        word,
        "if" | "then"
            | "else"
            | "elif"
            | "fi"
            | "do"
            | "done"
            | "case"
            | "esac"
            | "while"
            | "until"
            | "for"
            | "in"
            | "select"
            | "function"
            | "time"
            | "coproc"
            | "[["
            | "]]"
            | "{"
            | "}"
            | "!"
    )
}

fn is_assignment(raw: &str) -> bool {
    let bytes = raw.as_bytes();
    let name_len = bytes
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
        .count();
    name_len > 0
        && !bytes[0].is_ascii_digit()
        && (bytes.get(name_len) == Some(&b'=')
            || (bytes.get(name_len) == Some(&b'+') && bytes.get(name_len + 1) == Some(&b'=')))
}

/// Bytes that end an unquoted word.
fn is_delimiter(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>')
}

/// Bytes the subset does not allow outside single quotes.
fn is_rejected(b: u8) -> bool {
    matches!(b, b'$' | b'`' | b'\\' | b'(' | b')' | b'{' | b'}' | b'!')
        || !(0x20..0x7f).contains(&b)
}

/// Read one word starting at `start`: (value after quote removal, raw text, next index).
fn read_word<'a>(
    bytes: &[u8],
    text: &'a str,
    start: usize,
) -> Option<(Cow<'a, str>, &'a str, usize)> {
    let mut i = start;
    let mut owned: Option<String> = None;
    // Start of the pending unquoted run, for copying into `owned`.
    let mut run = start;
    while i < bytes.len() {
        let b = bytes[i];
        if is_delimiter(b) {
            break;
        }
        match b {
            b'\'' => {
                let buf = owned.get_or_insert_with(String::new);
                buf.push_str(&text[run..i]);
                let close = bytes[i + 1..].iter().position(|&c| c == b'\'')? + i + 1;
                let inner = &bytes[i + 1..close];
                if inner
                    .iter()
                    .any(|&c| !(0x20..0x7f).contains(&c) && c != b'\n' && c != b'\t')
                {
                    return None;
                }
                buf.push_str(&text[i + 1..close]);
                i = close + 1;
                run = i;
            }
            b'"' => {
                let buf = owned.get_or_insert_with(String::new);
                buf.push_str(&text[run..i]);
                let close = bytes[i + 1..].iter().position(|&c| c == b'"')? + i + 1;
                let inner = &bytes[i + 1..close];
                if inner.iter().any(|&c| {
                    matches!(c, b'$' | b'`' | b'\\')
                        || (!(0x20..0x7f).contains(&c) && c != b'\n' && c != b'\t')
                }) {
                    return None;
                }
                buf.push_str(&text[i + 1..close]);
                i = close + 1;
                run = i;
            }
            b if is_rejected(b) => return None,
            _ => i += 1,
        }
    }
    let raw = &text[start..i];
    let value = match owned {
        Some(mut buf) => {
            buf.push_str(&text[run..i]);
            Cow::Owned(buf)
        }
        None => Cow::Borrowed(raw),
    };
    Some((value, raw, i))
}

/// Read a redirection operator at `i` and its target word into `cmd`.
fn redirect<'a>(bytes: &[u8], text: &'a str, mut i: usize, cmd: &mut Cmd<'a>) -> Option<usize> {
    let write;
    let mut dup = false;
    match (bytes.get(i), bytes.get(i + 1), bytes.get(i + 2)) {
        (Some(b'&'), Some(b'>'), Some(b'>')) => {
            write = true;
            i += 3;
        }
        (Some(b'&'), Some(b'>'), _) => {
            write = true;
            i += 2;
        }
        (Some(b'>'), Some(b'>'), _) => {
            write = true;
            i += 2;
        }
        (Some(b'>'), Some(b'&'), _) => {
            write = true;
            dup = true;
            i += 2;
        }
        (Some(b'>'), Some(b'|'), _)
        | (Some(b'<'), Some(b'>'), _)
        | (Some(b'<'), Some(b'<'), _)
        | (Some(b'<'), Some(b'('), _)
        | (Some(b'>'), Some(b'('), _) => {
            return None;
        }
        (Some(b'<'), Some(b'&'), _) => {
            write = false;
            dup = true;
            i += 2;
        }
        (Some(b'>'), _, _) => {
            write = true;
            i += 1;
        }
        (Some(b'<'), _, _) => {
            write = false;
            i += 1;
        }
        _ => return None,
    }
    while matches!(bytes.get(i), Some(b' ') | Some(b'\t')) {
        i += 1;
    }
    match bytes.get(i) {
        None => return None,
        Some(b) if is_delimiter(*b) || *b == b'#' => return None,
        _ => {}
    }
    let (target, raw, next) = read_word(bytes, text, i)?;
    if raw.contains(['*', '?', '[', '~']) {
        return None;
    }
    if dup {
        if raw == "-" || raw.bytes().all(|b| b.is_ascii_digit()) {
            return Some(next);
        }
        if !write {
            return None;
        }
    }
    if write {
        cmd.writes.push(Arg::literal(target));
    } else {
        cmd.reads.push(Arg::literal(target));
        cmd.input = Some(Input::File);
    }
    Some(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(text: &str) -> Option<Vec<Vec<Vec<String>>>> {
        parse(text).map(|pipelines| {
            pipelines
                .into_iter()
                .map(|p| {
                    p.into_iter()
                        .map(|c| {
                            let mut words: Vec<String> =
                                c.args.iter().map(|a| a.as_str().to_string()).collect();
                            for w in &c.writes {
                                words.push(format!(">{}", w.as_str()));
                            }
                            words
                        })
                        .collect()
                })
                .collect()
        })
    }

    #[test]
    fn reads_the_subset() {
        assert_eq!(
            shape("git commit -m \"rm -rf x\" && ls 'a b'|wc -l"),
            Some(vec![
                vec![vec![
                    "git".to_string(),
                    "commit".into(),
                    "-m".into(),
                    "rm -rf x".into()
                ]],
                vec![
                    vec!["ls".to_string(), "a b".into()],
                    vec!["wc".to_string(), "-l".into()]
                ],
            ])
        );
        assert_eq!(
            shape("cargo test 2>&1 >out.txt # done"),
            Some(vec![vec![vec![
                "cargo".to_string(),
                "test".into(),
                ">out.txt".into()
            ]]])
        );
        assert_eq!(
            shape("A=1 B=2 make"),
            Some(vec![vec![vec!["make".to_string()]]])
        );
        assert_eq!(shape(""), Some(vec![]));
        assert_eq!(
            shape("ls;\n\nls &"),
            Some(vec![
                vec![vec!["ls".to_string()]],
                vec![vec!["ls".to_string()]]
            ])
        );
    }

    #[test]
    fn leaves_everything_else_to_the_parser() {
        for text in [
            "echo $HOME",
            "echo `id`",
            "\\rm x",
            "(ls)",
            "{ ls; }",
            "f() { :; }",
            "cat <<EOF\nx\nEOF",
            "ls |",
            "&& ls",
            "ls ;; ls",
            "echo 'unterminated",
            "if true; then ls; fi",
            "/bin/r? x",
            "ls |& cat",
            "echo \"a\\\"b\"",
            "ｒｍ x",
            "cat > ",
            "! ls",
            "~/bin/tool",
        ] {
            assert!(parse(text).is_none(), "{text:?}");
        }
    }
}
