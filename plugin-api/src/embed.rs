//! The manifest a plugin library carries inside itself.
//!
//! [`export_plugin!`](crate::export_plugin) places the crate's `plugin.toml`, together
//! with the plugin-api version the library was compiled against, in a data section of
//! the library (`.toolhost_plugin` on ELF). The host reads that section from the file
//! *without loading it*: a library next to the `toolhost` binary (where `cargo build`
//! puts it) or dropped alone into a plugin directory describes itself, and the host can
//! refuse a library built for another plugin-api before `dlopen` runs any of its code.
//!
//! The record is plain bytes (no alignment, no pointers):
//! `magic[16] | format u32 LE | api_version[32] NUL-padded | manifest_len u32 LE | manifest`.

/// Name of the section holding the record in ELF libraries.
pub const ELF_SECTION: &str = ".toolhost_plugin";

/// First bytes of the record.
pub const MAGIC: [u8; 16] = *b"toolhost-plugin\0";

/// Version of the record layout.
pub const FORMAT: u32 = 1;

const API_FIELD: usize = 32;
const HEADER_LEN: usize = 16 + 4 + API_FIELD + 4;

/// The record as laid out in the library. Built by [`export_plugin!`](crate::export_plugin).
#[repr(C)]
#[derive(Debug)]
pub struct EmbeddedManifest<const N: usize> {
    magic: [u8; 16],
    format: [u8; 4],
    api_version: [u8; API_FIELD],
    manifest_len: [u8; 4],
    manifest: [u8; N],
}

impl<const N: usize> EmbeddedManifest<N> {
    /// A record for `manifest` (the bytes of `plugin.toml`) built against this crate's
    /// version.
    pub const fn new(manifest: [u8; N]) -> Self {
        let version = crate::API_VERSION.as_bytes();
        let mut api_version = [0u8; API_FIELD];
        let mut i = 0;
        while i < version.len() && i < API_FIELD {
            api_version[i] = version[i];
            i += 1;
        }
        EmbeddedManifest {
            magic: MAGIC,
            format: FORMAT.to_le_bytes(),
            api_version,
            manifest_len: (N as u32).to_le_bytes(),
            manifest,
        }
    }

    /// Touch the record so the linker keeps it (called from the root module).
    pub fn keep(&'static self) {
        std::hint::black_box(self as *const Self);
    }
}

/// A decoded record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmbeddedInfo {
    /// The `toolhost-plugin-api` version the library was built against.
    pub api_version: String,
    /// The text of the crate's `plugin.toml`.
    pub manifest: String,
}

/// Why a record could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EmbedError {
    /// The bytes do not start with [`MAGIC`].
    BadMagic,
    /// A record format this crate does not know.
    UnknownFormat(u32),
    /// The record is shorter than its header says.
    Truncated,
    /// The version or manifest is not UTF-8.
    NotUtf8,
}

impl std::fmt::Display for EmbedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EmbedError::BadMagic => f.write_str("embedded manifest has a bad magic number"),
            EmbedError::UnknownFormat(v) => write!(f, "embedded manifest format {v} is unknown"),
            EmbedError::Truncated => f.write_str("embedded manifest is truncated"),
            EmbedError::NotUtf8 => f.write_str("embedded manifest is not UTF-8"),
        }
    }
}

impl std::error::Error for EmbedError {}

fn le_u32(bytes: &[u8]) -> u32 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[..4]);
    u32::from_le_bytes(word)
}

/// Decode a record from the contents of the section.
pub fn decode(bytes: &[u8]) -> Result<EmbeddedInfo, EmbedError> {
    if bytes.len() < HEADER_LEN {
        return Err(if bytes.starts_with(&MAGIC[..bytes.len().min(16)]) {
            EmbedError::Truncated
        } else {
            EmbedError::BadMagic
        });
    }
    if bytes[..16] != MAGIC {
        return Err(EmbedError::BadMagic);
    }
    let format = le_u32(&bytes[16..20]);
    if format != FORMAT {
        return Err(EmbedError::UnknownFormat(format));
    }
    let api = &bytes[20..20 + API_FIELD];
    let api_len = api.iter().position(|&b| b == 0).unwrap_or(API_FIELD);
    let api_version = std::str::from_utf8(&api[..api_len])
        .map_err(|_| EmbedError::NotUtf8)?
        .to_string();
    let len = le_u32(&bytes[20 + API_FIELD..HEADER_LEN]) as usize;
    let manifest = bytes
        .get(HEADER_LEN..HEADER_LEN.saturating_add(len))
        .ok_or(EmbedError::Truncated)?;
    let manifest = std::str::from_utf8(manifest)
        .map_err(|_| EmbedError::NotUtf8)?
        .to_string();
    Ok(EmbeddedInfo {
        api_version,
        manifest,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes_of<const N: usize>(record: &EmbeddedManifest<N>) -> Vec<u8> {
        // The record is only byte arrays, so its memory is exactly its encoding.
        let mut out = Vec::new();
        out.extend_from_slice(&record.magic);
        out.extend_from_slice(&record.format);
        out.extend_from_slice(&record.api_version);
        out.extend_from_slice(&record.manifest_len);
        out.extend_from_slice(&record.manifest);
        assert_eq!(out.len(), std::mem::size_of::<EmbeddedManifest<N>>());
        out
    }

    #[test]
    fn round_trip() {
        let record = EmbeddedManifest::new(*b"name = \"x\"\n");
        let info = decode(&bytes_of(&record)).unwrap();
        assert_eq!(info.api_version, crate::API_VERSION);
        assert_eq!(info.manifest, "name = \"x\"\n");
    }

    #[test]
    fn rejects_garbage_and_truncation() {
        assert_eq!(decode(b"hello"), Err(EmbedError::BadMagic));
        let record = EmbeddedManifest::new(*b"name = \"x\"\n");
        let bytes = bytes_of(&record);
        assert_eq!(
            decode(&bytes[..bytes.len() - 3]),
            Err(EmbedError::Truncated)
        );
        assert_eq!(decode(&bytes[..10]), Err(EmbedError::Truncated));
        let mut wrong = bytes;
        wrong[16] = 9;
        assert_eq!(decode(&wrong), Err(EmbedError::UnknownFormat(9)));
    }
}
