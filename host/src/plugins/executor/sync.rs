//! The primitives the slot hand-off is built on, from one place: the standard library's
//! normally, and loom's when the crate is built with `--cfg toolhost_loom`, so that
//! `loom_tests.rs` can run the slot protocol under every interleaving loom can produce
//! (see docs/testing.md for the command).
//!
//! Only what the protocol's correctness rests on is swapped: the slot's state word, the
//! mutexes around job, output and waiter, and the threads that are parked and unparked.
//! The cancel flag and the CPU hints stay standard atomics (they carry no hand-off).

#[cfg(not(toolhost_loom))]
pub(super) use std::sync::atomic::AtomicU32;
#[cfg(not(toolhost_loom))]
pub(super) use std::sync::{Mutex, MutexGuard};
#[cfg(not(toolhost_loom))]
pub(super) use std::thread::{Thread, current};

#[cfg(toolhost_loom)]
pub(super) use loom::sync::atomic::AtomicU32;
#[cfg(toolhost_loom)]
pub(super) use loom::sync::{Mutex, MutexGuard};
#[cfg(toolhost_loom)]
pub(super) use loom::thread::{Thread, current};
