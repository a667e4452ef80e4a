//! What `printf FORMAT ARGS...` prints, as far as the analyser needs it: `%s`, `%b`
//! (backslash escapes decoded in the argument), `%c`, numeric conversions (the argument as
//! written), `%%`, escapes in the format, and the format reused while arguments remain —
//! so `printf '%b' 'rm\x20-rf /' | sh` is judged as `rm -rf /`.

use super::super::ansi_c::decode_ansi_c;

/// The text `printf` prints for `format` and `values`.
pub(crate) fn format(format: &str, values: &[&str]) -> String {
    let format = decode_ansi_c(format);
    let mut out = String::new();
    let mut next = 0usize;
    loop {
        let consumed = once(&format, values, &mut next, &mut out);
        // The format is reused while arguments remain (and consumed some).
        if !consumed || next >= values.len() {
            break;
        }
    }
    out
}

/// One pass over the format; returns whether it consumed an argument.
fn once(format: &str, values: &[&str], next: &mut usize, out: &mut String) -> bool {
    let mut consumed = false;
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        // Flags, width and precision.
        while chars
            .peek()
            .is_some_and(|c| matches!(c, '-' | '+' | ' ' | '#' | '0'..='9' | '.' | '*'))
        {
            chars.next();
        }
        let Some(conv) = chars.next() else { break };
        if conv == '%' {
            out.push('%');
            continue;
        }
        let value = values.get(*next).copied().unwrap_or_default();
        *next += 1;
        consumed = true;
        match conv {
            'b' => out.push_str(&decode_ansi_c(value)),
            'c' => out.extend(value.chars().next()),
            _ => out.push_str(value),
        }
    }
    consumed
}

#[cfg(test)]
mod tests {
    use super::format;

    #[test]
    fn conversions_escapes_and_reuse() {
        let cases: &[(&str, &[&str], &str)] = &[
            ("%s\\n", &["rm -rf /"], "rm -rf /\n"),
            ("%b", &["rm\\x20-rf\\x20/"], "rm -rf /"),
            ("rm -rf %s\\n", &["/"], "rm -rf /\n"),
            ("%s %s\\n", &["a", "b", "c", "d"], "a b\nc d\n"),
            ("100%%", &[], "100%"),
            ("%5s|%-3d", &["x", "7"], "x|7"),
            ("%c%c", &["rm", "m"], "rm"),
        ];
        for (fmt, values, want) in cases {
            assert_eq!(format(fmt, values), *want, "printf {fmt:?} {values:?}");
        }
    }
}
