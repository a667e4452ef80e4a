//! Regular expressions written in the source code.
//!
//! One way to hold them: a `static NAME: LiteralRegex = LiteralRegex::new(r"…")`, compiled
//! on first use, or [`compile_literal`] for tables assembled at start-up from literal
//! parts. The `regex` crate cannot check a pattern at compile time, so a typo would only
//! show at run time, where the tempting `Regex::new(…).ok()` turns it into a pattern that
//! silently matches nothing — in a danger detector or a secret redactor, a check that
//! passes everything. Here a pattern that does not compile is logged at error level once,
//! [`LiteralRegex::get`] returns `None` so callers that guard something can fail closed,
//! and every module that holds patterns has a test that compiles each of them
//! ([`LiteralRegex::check`]), so a broken one fails the build's tests instead of shipping.

use std::sync::OnceLock;

use regex::Regex;

/// A pattern written in the source, compiled on first use.
pub struct LiteralRegex {
    pattern: &'static str,
    compiled: OnceLock<Option<Regex>>,
}

impl LiteralRegex {
    /// A pattern to compile on first use (usable in a `static`).
    pub const fn new(pattern: &'static str) -> Self {
        Self {
            pattern,
            compiled: OnceLock::new(),
        }
    }

    /// The compiled pattern; `None` when it does not compile (logged once). Callers that
    /// guard something treat `None` as "cannot judge": fail closed.
    pub fn get(&self) -> Option<&Regex> {
        self.compiled
            .get_or_init(|| compile_literal(self.pattern))
            .as_ref()
    }

    /// The pattern's source text.
    pub fn pattern(&self) -> &'static str {
        self.pattern
    }

    /// Compile the pattern afresh and report why it does not compile: for the test every
    /// module holding patterns has.
    pub fn check(&self) -> Result<(), regex::Error> {
        Regex::new(self.pattern).map(drop)
    }
}

impl std::fmt::Debug for LiteralRegex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("LiteralRegex").field(&self.pattern).finish()
    }
}

/// Compile a pattern built from literals (a table with a shared prefix, `format!`ed
/// alternatives). `None`, logged at error level, when it does not compile: the caller's
/// test compiles the whole table and fails on it.
pub fn compile_literal(pattern: &str) -> Option<Regex> {
    match Regex::new(pattern) {
        Ok(regex) => Some(regex),
        Err(err) => {
            tracing::error!(%pattern, %err, "a literal regex does not compile");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static WORD: LiteralRegex = LiteralRegex::new(r"\bword\b");
    static BROKEN: LiteralRegex = LiteralRegex::new(r"(unclosed");

    #[test]
    fn a_good_pattern_compiles_once_and_matches() {
        assert!(WORD.check().is_ok());
        let first = WORD.get().map(|re| re as *const Regex);
        assert!(WORD.get().is_some_and(|re| re.is_match("a word here")));
        assert_eq!(first, WORD.get().map(|re| re as *const Regex));
    }

    #[test]
    fn a_broken_pattern_is_none_and_check_says_why() {
        assert!(BROKEN.get().is_none());
        let err = BROKEN.check().map_err(|e| e.to_string());
        assert!(
            err.as_ref().is_err_and(|e| e.contains("unclosed")),
            "{err:?}"
        );
    }

    #[test]
    fn compile_literal_reports_a_broken_table_entry_as_none() {
        assert!(compile_literal("a|b").is_some());
        assert!(compile_literal("[z-a]").is_none());
    }

    #[test]
    fn debug_shows_the_pattern() {
        assert_eq!(format!("{WORD:?}"), r#"LiteralRegex("\\bword\\b")"#);
    }
}
