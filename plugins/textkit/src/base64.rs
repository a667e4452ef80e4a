//! Standard base64 (RFC 4648) through the `base64` crate, with the leniency a model's
//! input needs when decoding: whitespace (line-wrapped input) is ignored and padding is
//! optional.

use ::base64::Engine as _;
use ::base64::alphabet::STANDARD;
use ::base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};

/// The standard alphabet; encoding pads, decoding takes padded or unpadded input.
const LENIENT: GeneralPurpose = GeneralPurpose::new(
    &STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Encode `bytes` with padding.
pub fn encode(bytes: &[u8]) -> String {
    LENIENT.encode(bytes)
}

/// Decode `text` (whitespace is ignored; padding is optional).
pub fn decode(text: &str) -> Result<Vec<u8>, String> {
    let symbols: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    LENIENT
        .decode(symbols)
        .map_err(|e| format!("invalid base64: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc4648_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, encoded) in cases {
            assert_eq!(encode(plain.as_bytes()), encoded);
            assert_eq!(decode(encoded).unwrap(), plain.as_bytes());
        }
    }

    #[test]
    fn padding_is_optional() {
        assert_eq!(decode("Zg").unwrap(), b"f");
        assert_eq!(decode("Zm8").unwrap(), b"fo");
    }

    #[test]
    fn rejects_bad_input() {
        assert!(decode("Zm9v!").is_err());
        assert!(decode("Z").is_err());
        assert_eq!(decode("Zm9v\nYmFy").unwrap(), b"foobar");
    }
}
