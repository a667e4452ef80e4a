//! Loading an image for the vision model: from a file, an http(s) URL (through the
//! same fetcher and address policy as `web_extract`) or a `data:` URL; checked for
//! size and type; downscaled locally when larger than the model needs; encoded as a
//! `data:` URL for the request.

use std::io::Cursor;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use image::{ImageFormat, ImageReader};

use crate::fetch::{FetchError, client, fetch};
use crate::settings::Settings;

/// Why an image could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The path given.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The URL could not be fetched.
    #[error("cannot fetch the image: {0}")]
    Fetch(#[from] FetchError),
    /// A malformed `data:` URL.
    #[error("invalid data: URL (expected data:<type>;base64,<data>)")]
    DataUrl,
    /// Over the size cap.
    #[error("the image is {size} bytes; the limit is {limit}")]
    TooLarge {
        /// Bytes given.
        size: usize,
        /// The cap.
        limit: u64,
    },
    /// Not PNG, JPEG, GIF or WebP, or not decodable.
    #[error("unsupported or damaged image (PNG, JPEG, GIF and WebP are accepted): {0}")]
    Format(String),
}

/// The raw bytes named by `source`.
pub fn load(source: &str, settings: &Settings) -> Result<Vec<u8>, ImageError> {
    let bytes = if let Some(rest) = source.strip_prefix("data:") {
        let (_, data) = rest.split_once(";base64,").ok_or(ImageError::DataUrl)?;
        STANDARD
            .decode(data.trim())
            .map_err(|_| ImageError::DataUrl)?
    } else if source.starts_with("http://") || source.starts_with("https://") {
        let http = client(settings)?;
        fetch(&http, settings, source)?.body
    } else {
        let path = source.strip_prefix("file://").unwrap_or(source);
        let meta = std::fs::metadata(path).map_err(|e| ImageError::Read {
            path: path.to_string(),
            source: e,
        })?;
        if meta.len() > settings.max_bytes {
            return Err(ImageError::TooLarge {
                size: usize::try_from(meta.len()).unwrap_or(usize::MAX),
                limit: settings.max_bytes,
            });
        }
        std::fs::read(path).map_err(|e| ImageError::Read {
            path: path.to_string(),
            source: e,
        })?
    };
    if bytes.len() as u64 > settings.max_bytes {
        return Err(ImageError::TooLarge {
            size: bytes.len(),
            limit: settings.max_bytes,
        });
    }
    Ok(bytes)
}

/// `bytes` as a `data:` URL the model accepts: sent as is when it is small enough in
/// both bytes and pixels, else decoded, scaled to fit `max_side` and re-encoded (PNG
/// when it has transparency, JPEG otherwise).
pub fn to_data_url(
    bytes: &[u8],
    max_side: u32,
    max_send_bytes: usize,
) -> Result<String, ImageError> {
    let reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| ImageError::Format(e.to_string()))?;
    let format = reader
        .format()
        .filter(|f| {
            matches!(
                f,
                ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::Gif | ImageFormat::WebP
            )
        })
        .ok_or_else(|| ImageError::Format("not PNG, JPEG, GIF or WebP".into()))?;
    let (width, height) = reader
        .into_dimensions()
        .map_err(|e| ImageError::Format(e.to_string()))?;
    if width <= max_side && height <= max_side && bytes.len() <= max_send_bytes {
        return Ok(format!(
            "data:{};base64,{}",
            format.to_mime_type(),
            STANDARD.encode(bytes)
        ));
    }
    let image = image::load_from_memory_with_format(bytes, format)
        .map_err(|e| ImageError::Format(e.to_string()))?;
    let image = if width > max_side || height > max_side {
        image.resize(max_side, max_side, image::imageops::FilterType::Triangle)
    } else {
        image
    };
    let mut out = Cursor::new(Vec::new());
    let mime = if image.color().has_alpha() {
        image
            .write_to(&mut out, ImageFormat::Png)
            .map(|_| "image/png")
    } else {
        image
            .to_rgb8()
            .write_to(&mut out, ImageFormat::Jpeg)
            .map(|_| "image/jpeg")
    }
    .map_err(|e| ImageError::Format(e.to_string()))?;
    Ok(format!(
        "data:{mime};base64,{}",
        STANDARD.encode(out.into_inner())
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let image = image::RgbImage::from_fn(width, height, |x, y| {
            image::Rgb([(x % 256) as u8, (y % 256) as u8, 0])
        });
        let mut out = Cursor::new(Vec::new());
        image.write_to(&mut out, ImageFormat::Png).unwrap();
        out.into_inner()
    }

    fn decode(url: &str) -> image::DynamicImage {
        let data = url.split_once(";base64,").unwrap().1;
        image::load_from_memory(&STANDARD.decode(data).unwrap()).unwrap()
    }

    #[test]
    fn small_images_are_sent_as_they_are() {
        let bytes = png(10, 10);
        let url = to_data_url(&bytes, 1024, 1 << 20).unwrap();
        assert_eq!(
            url,
            format!("data:image/png;base64,{}", STANDARD.encode(&bytes))
        );
    }

    #[test]
    fn large_images_are_scaled_to_fit() {
        let url = to_data_url(&png(2000, 500), 1000, 1 << 20).unwrap();
        assert!(url.starts_with("data:image/jpeg;base64,"), "{}", &url[..30]);
        let image = decode(&url);
        assert_eq!((image.width(), image.height()), (1000, 250));
    }

    #[test]
    fn other_formats_are_refused() {
        let error = to_data_url(b"BM not really a bitmap", 1000, 1 << 20).unwrap_err();
        assert!(matches!(error, ImageError::Format(_)), "{error}");
        let error = to_data_url(b"plain text", 1000, 1 << 20).unwrap_err();
        assert!(matches!(error, ImageError::Format(_)), "{error}");
    }

    #[test]
    fn files_over_the_cap_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.png");
        std::fs::write(&path, png(64, 64)).unwrap();
        let settings = Settings {
            max_bytes: 10,
            ..Settings::default()
        };
        let error = load(path.to_str().unwrap(), &settings).unwrap_err();
        assert!(matches!(error, ImageError::TooLarge { .. }), "{error}");
    }
}
