//! Reading command input from a file, an argument, or stdin (`-`).

use std::io::Read;
use std::path::Path;

use super::CliError;

/// The text of `source`: a path, or `-` / `None` for stdin.
pub fn read_source(source: Option<&Path>) -> Result<String, CliError> {
    match source {
        Some(path) if path != Path::new("-") => {
            std::fs::read_to_string(path).map_err(|source| CliError::Io {
                what: format!("cannot read {}", path.display()),
                source,
            })
        }
        _ => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|source| CliError::Io {
                    what: "cannot read stdin".into(),
                    source,
                })?;
            Ok(text)
        }
    }
}
