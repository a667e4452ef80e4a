//! Small text helpers every toolhost crate shares, so each small thing is done one way:
//!
//! - [`LiteralRegex`] / [`compile_literal`]: regular expressions written in the source. A
//!   pattern that does not compile is a bug, never a pattern that silently matches
//!   nothing: it is logged, callers that guard something fail closed, and every crate has
//!   a test that compiles each of its patterns.
//! - [`strip_ansi`]: ANSI/ECMA-48 escape sequences out of terminal output (the approval
//!   analyser's de-obfuscation and the tools' output cleaning use the same reading).
//! - [`thousands`]: `1234567` → `1,234,567` in messages the model reads.
//! - [`INVISIBLE_CHARS`]: the zero-width and bidirectional characters injection scanners
//!   look for.
//!
//! The crate depends on no other toolhost crate, so `toolhost-approval` stays usable on its
//! own.

mod ansi;
mod invisible;
mod literal_regex;
mod numbers;

pub use ansi::strip_ansi;
pub use invisible::INVISIBLE_CHARS;
pub use literal_regex::{LiteralRegex, compile_literal};
pub use numbers::thousands;
