//! `${VAR}` and Cursor-style `${env:VAR}` placeholders in MCP server settings.
//!
//! Values come from the process environment. An unset variable keeps its literal
//! placeholder (Hermes' rule, so a missing secret shows up verbatim in the server's
//! error instead of silently becoming empty) and is warned about once per use.

/// Replace every `${NAME}` / `${env:NAME}` in `text` with `lookup(NAME)`.
pub fn interpolate(text: &str, lookup: &dyn Fn(&str) -> Option<String>, server: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let inner = &after[..end];
        let name = inner.strip_prefix("env:").unwrap_or(inner).trim();
        let placeholder = &rest[start..start + 2 + end + 1];
        if is_var_name(name) {
            match lookup(name) {
                Some(value) => out.push_str(&value),
                None => {
                    tracing::warn!(
                        server,
                        variable = name,
                        "MCP server setting refers to an unset environment variable; the placeholder is kept as is"
                    );
                    out.push_str(placeholder);
                }
            }
        } else {
            out.push_str(placeholder);
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

fn is_var_name(name: &str) -> bool {
    !name.is_empty()
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !name.as_bytes()[0].is_ascii_digit()
}

/// Look a variable up in the process environment.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(name: &str) -> Option<String> {
        match name {
            "A" => Some("1".into()),
            "LONG_NAME_2" => Some("two".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn table() {
        let cases = [
            ("plain", "plain"),
            ("${A}", "1"),
            ("x${A}y${LONG_NAME_2}z", "x1ytwoz"),
            ("${env:A}", "1"),
            ("${ A }", "1"),
            ("[${EMPTY}]", "[]"),
            ("${MISSING}", "${MISSING}"),
            ("${env:MISSING}", "${env:MISSING}"),
            ("${not a var}", "${not a var}"),
            ("${1A}", "${1A}"),
            ("unterminated ${A", "unterminated ${A"),
            ("$A and $$ and {A}", "$A and $$ and {A}"),
            ("${}", "${}"),
            ("é${A}é", "é1é"),
        ];
        for (input, want) in cases {
            assert_eq!(interpolate(input, &lookup, "s"), want, "{input}");
        }
    }
}
