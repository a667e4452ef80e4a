//! Checking a library file before `dlopen`, and reading its embedded manifest.
//!
//! `dlopen` maps a library's `PT_LOAD` segments straight from the file; if the file is
//! shorter than a segment says (a truncated copy, a download or install still being
//! written), touching the missing pages kills the whole process with SIGBUS — nothing
//! can catch that. So before loading, the host reads the ELF header, checks class,
//! byte order, machine and type against its own, and checks that every loadable segment
//! and the section header table lie inside the file. Only a few kilobytes are read,
//! whatever the library's size.
//!
//! The same walk finds the `.toolhost_plugin` section holding the manifest the SDK
//! embeds (see `toolhost_plugin_api::embed`).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use toolhost_plugin_api::embed::ELF_SECTION;

/// Why a file cannot be a loadable plugin library.
#[derive(Debug, thiserror::Error)]
pub enum ElfError {
    /// The file cannot be read.
    #[error("cannot read the library: {0}")]
    Io(#[from] std::io::Error),
    /// Not an ELF file at all (a text file, an archive, ...).
    #[error("not a shared library (no ELF header)")]
    NotElf,
    /// Part of the file the loader would map is missing.
    #[error("file truncated: {what} ends at byte {end}, but the file has {len} bytes")]
    Truncated {
        /// What is cut off.
        what: String,
        /// Where it should end.
        end: u64,
        /// The file's length.
        len: u64,
    },
    /// Built for another CPU, word size or byte order.
    #[error("built for another platform: {0}")]
    WrongPlatform(String),
    /// An executable, object file or core dump rather than a shared library.
    #[error("not a shared library (ELF type {0})")]
    NotShared(u16),
    /// Structurally broken.
    #[error("malformed ELF file: {0}")]
    Malformed(String),
}

/// What the check learned.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ElfInfo {
    /// The contents of the `.toolhost_plugin` section, if the library has one.
    pub embedded: Option<Vec<u8>>,
}

const PT_LOAD: u32 = 1;
const ET_DYN: u16 = 3;
const SHT_NOBITS: u32 = 8;
const MAX_EMBEDDED: u64 = 1 << 20;

/// The ELF machine number of this host's CPU, when known.
fn host_machine() -> Option<u16> {
    Some(match std::env::consts::ARCH {
        "x86" => 3,
        "x86_64" => 62,
        "arm" => 40,
        "aarch64" => 183,
        "riscv64" | "riscv32" => 243,
        "powerpc64" => 21,
        "powerpc" => 20,
        "s390x" => 22,
        "loongarch64" => 258,
        "mips" | "mips64" => 8,
        _ => return None,
    })
}

struct Reader {
    file: File,
    len: u64,
    big_endian: bool,
    wide: bool,
}

impl Reader {
    fn bytes(&mut self, offset: u64, count: u64, what: &str) -> Result<Vec<u8>, ElfError> {
        let end = offset
            .checked_add(count)
            .ok_or_else(|| ElfError::Malformed(format!("{what} has an impossible size")))?;
        if end > self.len {
            return Err(ElfError::Truncated {
                what: what.to_string(),
                end,
                len: self.len,
            });
        }
        let mut buf = vec![
            0u8;
            usize::try_from(count)
                .map_err(|_| ElfError::Malformed(format!("{what} is too large")))?
        ];
        self.file.seek(SeekFrom::Start(offset))?;
        self.file.read_exact(&mut buf)?;
        Ok(buf)
    }

    fn u16(&self, b: &[u8], at: usize) -> u16 {
        let w = [b[at], b[at + 1]];
        if self.big_endian {
            u16::from_be_bytes(w)
        } else {
            u16::from_le_bytes(w)
        }
    }

    fn u32(&self, b: &[u8], at: usize) -> u32 {
        let w = [b[at], b[at + 1], b[at + 2], b[at + 3]];
        if self.big_endian {
            u32::from_be_bytes(w)
        } else {
            u32::from_le_bytes(w)
        }
    }

    fn u64(&self, b: &[u8], at: usize) -> u64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[at..at + 8]);
        if self.big_endian {
            u64::from_be_bytes(w)
        } else {
            u64::from_le_bytes(w)
        }
    }

    /// An address-sized field: 8 bytes at `at64` in ELF64, 4 bytes at `at32` in ELF32.
    fn addr(&self, b: &[u8], at64: usize, at32: usize) -> u64 {
        if self.wide {
            self.u64(b, at64)
        } else {
            u64::from(self.u32(b, at32))
        }
    }
}

struct Section {
    name: u32,
    kind: u32,
    offset: u64,
    size: u64,
    link: u32,
}

/// On platforms whose libraries are not ELF (macOS, Windows) there is nothing to check
/// here; abi_stable's own checks still run at load time.
#[cfg(not(all(unix, not(target_vendor = "apple"))))]
pub fn check(path: &Path) -> Result<ElfInfo, ElfError> {
    if !std::fs::metadata(path)?.is_file() {
        return Err(ElfError::NotElf);
    }
    Ok(ElfInfo::default())
}

/// Check `path` as described in the module docs.
#[cfg(all(unix, not(target_vendor = "apple")))]
pub fn check(path: &Path) -> Result<ElfInfo, ElfError> {
    let file = File::open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(ElfError::NotElf);
    }
    let len = meta.len();
    let mut reader = Reader {
        file,
        len,
        big_endian: false,
        wide: true,
    };
    let magic_len = len.min(16);
    let ident = reader.bytes(0, magic_len, "ELF identification")?;
    if ident.len() < 4 || ident[..4] != *b"\x7fELF" {
        return Err(ElfError::NotElf);
    }
    if ident.len() < 16 {
        return Err(ElfError::Truncated {
            what: "ELF identification".into(),
            end: 16,
            len,
        });
    }
    reader.wide = match ident[4] {
        1 => false,
        2 => true,
        other => return Err(ElfError::Malformed(format!("unknown ELF class {other}"))),
    };
    reader.big_endian = match ident[5] {
        1 => false,
        2 => true,
        other => return Err(ElfError::Malformed(format!("unknown byte order {other}"))),
    };
    if reader.wide != (usize::BITS == 64) {
        return Err(ElfError::WrongPlatform(format!(
            "{}-bit library, {}-bit host",
            if reader.wide { 64 } else { 32 },
            usize::BITS
        )));
    }
    if reader.big_endian != cfg!(target_endian = "big") {
        return Err(ElfError::WrongPlatform(
            "byte order differs from the host's".into(),
        ));
    }
    let header = reader.bytes(0, if reader.wide { 64 } else { 52 }, "ELF header")?;
    let e_type = reader.u16(&header, 16);
    let machine = reader.u16(&header, 18);
    if let Some(expected) = host_machine()
        && machine != expected
    {
        return Err(ElfError::WrongPlatform(format!(
            "ELF machine {machine}, this host ({}) is {expected}",
            std::env::consts::ARCH
        )));
    }
    if e_type != ET_DYN {
        return Err(ElfError::NotShared(e_type));
    }
    let (phoff, shoff) = (reader.addr(&header, 32, 28), reader.addr(&header, 40, 32));
    let at = |wide: usize, narrow: usize| if reader.wide { wide } else { narrow };
    let phentsize = u64::from(reader.u16(&header, at(54, 42)));
    let phnum = u64::from(reader.u16(&header, at(56, 44)));
    let shentsize = u64::from(reader.u16(&header, at(58, 46)));
    let mut shnum = u64::from(reader.u16(&header, at(60, 48)));
    let mut shstrndx = u32::from(reader.u16(&header, at(62, 50)));

    let min_ph = if reader.wide { 56 } else { 32 };
    if phnum == 0 || phentsize < min_ph {
        return Err(ElfError::Malformed("no program headers".into()));
    }
    let table = reader.bytes(phoff, phentsize * phnum, "the program header table")?;
    let mut loadable = 0;
    for i in 0..phnum {
        let entry = &table[(i * phentsize) as usize..][..min_ph as usize];
        if reader.u32(entry, 0) != PT_LOAD {
            continue;
        }
        loadable += 1;
        let offset = reader.addr(entry, 8, 4);
        let filesz = reader.addr(entry, 32, 16);
        let end = offset
            .checked_add(filesz)
            .ok_or_else(|| ElfError::Malformed(format!("segment {i} has an impossible size")))?;
        if end > len {
            return Err(ElfError::Truncated {
                what: format!("loadable segment {i}"),
                end,
                len,
            });
        }
    }
    if loadable == 0 {
        return Err(ElfError::Malformed("no loadable segments".into()));
    }

    if shoff == 0 {
        return Ok(ElfInfo::default());
    }
    let min_sh = if reader.wide { 64 } else { 40 };
    if shentsize < min_sh {
        return Err(ElfError::Malformed("section headers are too small".into()));
    }
    let parse_section = |reader: &Reader, b: &[u8]| Section {
        name: reader.u32(b, 0),
        kind: reader.u32(b, 4),
        offset: reader.addr(b, 24, 16),
        size: reader.addr(b, 32, 20),
        link: reader.u32(b, if reader.wide { 40 } else { 24 }),
    };
    if shnum == 0 || shstrndx == 0xffff {
        // Extended numbering: the real values live in section 0.
        let first = reader.bytes(shoff, shentsize, "the section header table")?;
        let zero = parse_section(&reader, &first);
        if shnum == 0 {
            shnum = zero.size;
        }
        if shstrndx == 0xffff {
            shstrndx = zero.link;
        }
    }
    let table_len = shentsize
        .checked_mul(shnum)
        .ok_or_else(|| ElfError::Malformed("impossible section count".into()))?;
    let table = reader.bytes(shoff, table_len, "the section header table")?;
    let sections: Vec<Section> = (0..shnum)
        .map(|i| {
            parse_section(
                &reader,
                &table[(i * shentsize) as usize..][..min_sh as usize],
            )
        })
        .collect();
    let Some(strtab) = sections.get(shstrndx as usize) else {
        return Ok(ElfInfo::default());
    };
    let names = reader.bytes(strtab.offset, strtab.size, "the section name table")?;
    let wanted = ELF_SECTION.as_bytes();
    for section in &sections {
        let start = section.name as usize;
        let name = names
            .get(start..)
            .map(|rest| &rest[..rest.iter().position(|&b| b == 0).unwrap_or(rest.len())]);
        if name != Some(wanted) || section.kind == SHT_NOBITS {
            continue;
        }
        if section.size > MAX_EMBEDDED {
            return Err(ElfError::Malformed(format!("{ELF_SECTION} is too large")));
        }
        let data = reader.bytes(section.offset, section.size, ELF_SECTION)?;
        return Ok(ElfInfo {
            embedded: Some(data),
        });
    }
    Ok(ElfInfo::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    #[test]
    fn text_and_empty_files_are_not_elf() {
        let dir = tempfile::tempdir().unwrap();
        let cases: &[&[u8]] = &[b"", b"hello, I am text", b"\x7fEL"];
        for bytes in cases {
            let err = check(&write(dir.path(), "x.so", bytes)).unwrap_err();
            assert!(matches!(err, ElfError::NotElf), "{bytes:?}: {err}");
        }
        assert!(matches!(check(dir.path()), Err(ElfError::NotElf)));
    }

    #[test]
    fn short_header_is_truncated() {
        let dir = tempfile::tempdir().unwrap();
        let err = check(&write(dir.path(), "x.so", b"\x7fELF\x02\x01\x01")).unwrap_err();
        assert!(err.to_string().starts_with("file truncated"), "{err}");
    }

    #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
    #[test]
    fn system_library_passes_and_truncated_copy_fails() {
        // The host's own C library: a real shared object on every Linux test machine.
        let candidates = [
            "/lib/x86_64-linux-gnu/libc.so.6",
            "/lib/aarch64-linux-gnu/libc.so.6",
            "/lib64/libc.so.6",
            "/usr/lib/libc.so.6",
        ];
        let libc = candidates
            .iter()
            .map(Path::new)
            .find(|p| p.exists())
            .expect("a glibc shared object at one of the usual paths");
        let info = check(libc).unwrap();
        assert_eq!(info.embedded, None);
        let bytes = std::fs::read(libc).unwrap();
        let dir = tempfile::tempdir().unwrap();
        for cut in [64usize, 4096, bytes.len() / 2, bytes.len() - 1] {
            let err = check(&write(dir.path(), "cut.so", &bytes[..cut])).unwrap_err();
            assert!(
                err.to_string().starts_with("file truncated"),
                "cut {cut}: {err}"
            );
        }
    }
}
