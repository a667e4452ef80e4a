//! toolhost's integration tests, as one test binary: one link step instead of one per
//! file, and one place (`suite/`) where every cross-crate test lives. README's
//! "Tests" section gives the placement rule and the services some of these tests need.

mod suite;
