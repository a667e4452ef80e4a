//! Shared helpers for toolhost's integration tests.
