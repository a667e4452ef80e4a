//! toolhost's integration tests, as one test binary: one link step instead of one per
//! file, and one place (`suite/`) where every cross-crate test lives. README's
//! "Tests" section gives the placement rule and the services some of these tests need.
// Test code: starts toolhost, fixtures and helper programs directly (exec_policy.rs).
#![allow(clippy::disallowed_methods)]

mod suite;
