//! Dangerous-command approval: the gate every terminal command passes before it runs.
//!
//! Two halves:
//! - the **detector**, [`detect`]`(command) -> `[`Verdict`] (`{"dangerous","hardline",
//!   "description","rule"}`): reads the command the way a shell does and runs the rules
//!   ([`rules`]) on every command that would run;
//! - the **flow**, [`ApprovalEngine`] (the [`ApprovalGate`] the terminal tool calls):
//!   hardline floor, deny globs, modes (manual / smart / off), once / session / always
//!   approvals, the terminal prompt or an embedder's callback, observers.
//!
//! The crate depends on no other toolhost crate but `toolhost-text` (small text helpers
//! with no toolhost dependency of their own), so another agent can adopt it: give
//! [`ApprovalEngine::new`] an [`AllowlistStore`] (where "always" answers are kept;
//! toolhost's edits `config.toml`) and an [`ApprovalObserver`] (toolhost's hooks). It
//! also carries the two helpers the flow needs and the rest of toolhost shares through
//! re-exports: [`redact`] (what a human or observer is shown of a command) and
//! [`bridge`] (the gate is synchronous; the smart approver and embedder callbacks are
//! async).
//!
//! ## How a command is read
//! 1. `normalize`: ANSI/ECMA-48 escapes, C1 controls, NULs, zero-width characters and CRs
//!    are removed and compatibility characters folded (NFKC: `ｒｍ` → `rm`).
//! 2. A front-end turns text into the commands that run (`model`): the *fast path*
//!    (`fastpath`) reads the plain subset most agent commands use (words, plain quotes,
//!    `|`, `&&`, `||`, `;`, `&`, simple redirections) exactly, without allocation-heavy
//!    parsing; anything else goes to the full shell parser (`shell`). The fast path is a
//!    documented, tested prefilter: inside its subset it yields exactly what the parser
//!    yields, and a differential test plus a property test check that on the benchmark
//!    corpus and on generated commands.
//! 3. `analyze` strips wrappers (`wrappers`: `sudo` with its options, `doas`, `env`,
//!    `nice`, `nohup`, `timeout`, `time`, `command`, `exec`, `xargs`, `busybox`, `stdbuf`,
//!    `chroot`, ...), analyses payloads recursively (`sh|bash|zsh|dash|ksh -c`, `eval`,
//!    `su -c`, `ssh host cmd`, `watch`, heredocs and here-strings fed to a shell or an
//!    interpreter, `find -exec`, `rg --pre`, `git -c alias.x=!cmd`, `system()` strings in
//!    inline interpreter code) and dispatches on the command name (`checks`). Data —
//!    quoted text, heredocs to non-interpreters, commit messages, grep patterns, echo and
//!    printf arguments — never reaches a rule as a command.
//!
//! ## Why brush-parser
//! Candidates measured on Hermes' 10 000-command benchmark mix (release build, this
//! machine): **brush-parser 0.4** parses a command in ≈ 4 µs (≈ 7.5 µs including word
//! parsing); **tree-sitter-bash 0.25** ≈ 10 µs for the parse alone; **yash-syntax** is
//! GPL-3.0 (incompatible with our MIT/Apache licence), POSIX-only (no process
//! substitution, no `[[`) and async; **conch-parser** is unmaintained since 2019.
//! brush-parser is the parser of brush, a bash-compatible shell that runs bash's own test
//! suite, so its tree is what a shell would execute: quotes, escapes, heredocs (with the
//! expansion flag), process substitution, extglob, arithmetic. It is strict — it rejects
//! what bash rejects instead of guessing the way an error-recovering highlighting grammar
//! (tree-sitter) does — which is what a fail-closed detector wants. It is pure Rust, MIT,
//! and maintained. Costs we accept: a few `unwrap`s on odd input (we catch panics and fail
//! closed), small global LRU caches for word parsing, and some dependency weight.
//!
//! ## Failing closed
//! Text over [`MAX_COMMAND_BYTES`] is hardline-blocked unanalysed. Text the parser rejects
//! is reported `parse.unparseable` (dangerous, approvable) and still analysed as far as
//! possible (repairs, line by line, and a crude operator split whose words go through the
//! same rules), so `rm -rf / ; echo "` still hits the floor. Nesting deeper than 8 levels is
//! reported `parse.too_deep`. A parser panic is caught and treated as unparseable.
// Tests start helper programs (bash, python3, pgrep) directly; the non-test build of
// this crate is where `clippy.toml`'s spawn rule applies (exec_policy.rs).
#![cfg_attr(test, allow(clippy::disallowed_methods))]

mod analyze;
mod ansi_c;
pub mod bridge;
mod checks;
mod comments;
mod detect;
mod downloads;
mod engine;
mod env_vars;
mod expand;
mod fastpath;
mod feeds;
mod fixed_answer;
mod gate;
pub mod glob;
pub mod messages;
mod model;
mod normalize;
mod observer;
mod options;
mod paths;
#[cfg(unix)]
mod prompt;
#[cfg(not(unix))]
mod prompt {
    //! No terminal prompt off Unix: embedders use the callback surface.
    use super::surface::{ApprovalRequest, Choice};
    /// Always false off Unix.
    pub fn terminal_available() -> bool {
        false
    }
    /// Never asks off Unix.
    pub fn ask(_request: &ApprovalRequest, _timeout: std::time::Duration) -> Option<Choice> {
        None
    }
}
#[cfg(test)]
mod action_tests;
#[cfg(test)]
mod category_corpus_tests;
#[cfg(test)]
mod corpus_tests;
#[cfg(test)]
mod differential_tests;
#[cfg(test)]
mod downloads_tests;
#[cfg(test)]
mod engine_tests;
#[cfg(test)]
mod fail_closed_tests;
#[cfg(test)]
mod oracle_tests;
#[cfg(test)]
mod prop_tests;
pub mod redact;
#[cfg(test)]
mod rule_table_tests;
#[cfg(test)]
mod rule_tests;
pub mod rules;
mod settings;
mod shell;
mod smart;
mod store;
mod strict;
#[cfg(test)]
mod strict_tests;
mod surface;
mod verdict;
mod wrappers;

pub use detect::{MAX_COMMAND_BYTES, detect, detect_full_parser, detect_in_task};
pub use downloads::Downloads;
pub use engine::{ALLOWLIST_KEYS, ApprovalEngine};
pub use fixed_answer::FixedAnswer;
pub use gate::{ActionCheck, AllowAllGate, ApprovalGate, CommandCheck, GateDecision};
pub use observer::{ApprovalEvent, ApprovalObserver, NoObserver};
pub use prompt::{ask as ask_on_terminal, terminal_available};
pub use settings::{ApprovalMode, ApprovalSettings, NoHumanPolicy, SmartSettings};
pub use smart::{SmartApprover, SmartVerdict};
pub use store::{AllowlistStore, MemoryOnly, StoreError};
pub use strict::provably_read_only;
pub use surface::{ApprovalCallback, ApprovalRequest, BoxFuture, Choice, Surfaces};
pub use verdict::{Finding, Verdict};
