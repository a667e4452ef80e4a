//! Link the `toolhost` binary with packed relative relocations (`DT_RELR`) on Linux
//! with glibc.
//!
//! Why: a position-independent Rust binary carries one 24-byte `R_X86_64_RELATIVE`
//! entry per pointer in its read-only data — ~640 KB for toolhost — and the dynamic
//! loader reads the whole table at every start. Packed, the table is a few kilobytes,
//! which takes ~0.6 MiB off the peak RSS of short commands such as `toolhost schema`
//! (BENCHMARKS.md) while keeping ASLR. GNU ld ≥ 2.38 and lld ≥ 15 understand the flag;
//! GNU ld only packs when the C library supports it (glibc ≥ 2.36) and otherwise links
//! as before.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=TOOLHOST_NO_PACKED_RELOCS");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" && std::env::var_os("TOOLHOST_NO_PACKED_RELOCS").is_none() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
