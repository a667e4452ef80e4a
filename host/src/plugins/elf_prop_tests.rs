//! Property tests for the ELF check: the file comes from outside the process (a plugin
//! directory anyone may write to), so no byte sequence may make the check panic, and a
//! library cut short anywhere must be refused before `dlopen` maps it.
//!
//! The cases are built from a small synthetic shared object (one loadable segment, a
//! section-name table and an embedded manifest section) laid out as the ELF64 format
//! describes; only little-endian 64-bit hosts build it.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use toolhost_plugin_api::embed::ELF_SECTION;

use super::elf::{ElfError, check};

const EHDR: usize = 64;
const PHDR: usize = 56;
const SHDR: usize = 64;

fn put16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

fn put32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn put64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

fn machine() -> u16 {
    match std::env::consts::ARCH {
        "aarch64" => 183,
        "riscv64" => 243,
        "loongarch64" => 258,
        "powerpc64" => 21,
        _ => 62,
    }
}

/// A minimal ELF64 shared object whose `.toolhost_plugin` section holds `payload`.
fn shared_object(payload: &[u8]) -> Vec<u8> {
    let names = format!("\0.shstrtab\0{ELF_SECTION}\0");
    let names_at = EHDR + PHDR;
    let payload_at = names_at + names.len();
    let shoff = payload_at + payload.len();
    let mut b = vec![0u8; shoff + 3 * SHDR];
    b[..4].copy_from_slice(b"\x7fELF");
    b[4] = 2; // 64-bit
    b[5] = 1; // little-endian
    b[6] = 1; // version
    put16(&mut b, 16, 3); // ET_DYN
    put16(&mut b, 18, machine());
    put32(&mut b, 20, 1);
    put64(&mut b, 32, EHDR as u64); // program headers
    put64(&mut b, 40, shoff as u64); // section headers
    put16(&mut b, 52, EHDR as u16);
    put16(&mut b, 54, PHDR as u16);
    put16(&mut b, 56, 1);
    put16(&mut b, 58, SHDR as u16);
    put16(&mut b, 60, 3);
    put16(&mut b, 62, 1); // names in section 1
    // One PT_LOAD covering everything before the section headers.
    put32(&mut b, EHDR, 1);
    put32(&mut b, EHDR + 4, 5);
    put64(&mut b, EHDR + 32, shoff as u64);
    put64(&mut b, EHDR + 40, shoff as u64);
    put64(&mut b, EHDR + 48, 0x1000);
    b[names_at..payload_at].copy_from_slice(names.as_bytes());
    b[payload_at..shoff].copy_from_slice(payload);
    // Section 1: the name table (SHT_STRTAB); section 2: the payload (SHT_PROGBITS).
    let s1 = shoff + SHDR;
    put32(&mut b, s1, 1);
    put32(&mut b, s1 + 4, 3);
    put64(&mut b, s1 + 24, names_at as u64);
    put64(&mut b, s1 + 32, names.len() as u64);
    let s2 = shoff + 2 * SHDR;
    put32(&mut b, s2, ".shstrtab\0".len() as u32 + 1);
    put32(&mut b, s2 + 4, 1);
    put64(&mut b, s2 + 24, payload_at as u64);
    put64(&mut b, s2 + 32, payload.len() as u64);
    b
}

fn write(dir: &Path, bytes: &[u8]) -> std::io::Result<PathBuf> {
    let path = dir.join("lib.so");
    std::fs::write(&path, bytes)?;
    Ok(path)
}

#[test]
fn the_synthetic_library_passes_and_yields_its_payload() {
    let dir = tempfile::tempdir().unwrap();
    let info = check(&write(dir.path(), &shared_object(b"name = \"x\"\n")).unwrap()).unwrap();
    assert_eq!(info.embedded.as_deref(), Some(&b"name = \"x\"\n"[..]));
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_bytes_are_answered_without_panicking(
        bytes in proptest::collection::vec(any::<u8>(), 0..600),
        elf_magic in any::<bool>(),
    ) {
        let mut bytes = bytes;
        if elf_magic && bytes.len() >= 4 {
            bytes[..4].copy_from_slice(b"\x7fELF");
        }
        let dir = tempfile::tempdir()?;
        let _ = check(&write(dir.path(), &bytes)?);
    }

    #[test]
    fn corrupted_headers_are_answered_without_panicking(
        payload in proptest::collection::vec(any::<u8>(), 0..64),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..12),
    ) {
        let mut bytes = shared_object(&payload);
        for (at, value) in edits {
            let i = at.index(bytes.len());
            bytes[i] = value;
        }
        let dir = tempfile::tempdir()?;
        let _ = check(&write(dir.path(), &bytes)?);
    }

    #[test]
    fn every_strict_prefix_is_refused(
        payload in proptest::collection::vec(any::<u8>(), 0..64),
        cut in any::<prop::sample::Index>(),
    ) {
        let bytes = shared_object(&payload);
        let cut = cut.index(bytes.len());
        let dir = tempfile::tempdir()?;
        let err = check(&write(dir.path(), &bytes[..cut])?).unwrap_err();
        prop_assert!(
            matches!(err, ElfError::NotElf | ElfError::Truncated { .. }),
            "cut at {} of {}: {}", cut, bytes.len(), err
        );
    }

    #[test]
    fn the_embedded_manifest_comes_back_unchanged(
        payload in proptest::collection::vec(any::<u8>(), 0..512),
    ) {
        let dir = tempfile::tempdir()?;
        let info = check(&write(dir.path(), &shared_object(&payload))?).unwrap();
        prop_assert_eq!(info.embedded, Some(payload));
    }
}
