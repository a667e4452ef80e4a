//! What the benches (`benches/web.rs`) drive: the conversion step of `web_extract` and
//! the whole tool as the plugin runs it, without the plugin ABI around them. Hidden from
//! the docs; not an API of the plugin (which is only ever loaded as a `cdylib`).

use std::path::Path;

use serde_json::Value;

pub use crate::settings::Settings;

/// Convert `body` (HTML) fetched from `url`: the page's title and Markdown.
pub fn convert_html(body: &[u8], url: &str) -> Option<(String, String)> {
    crate::convert::convert("text/html", body, url)
        .ok()
        .map(|page| (page.title, page.content))
}

/// Run `web_extract` with `args` (its JSON arguments); `None` when they do not parse
/// or the tool failed outright.
pub fn web_extract(args: Value, settings: &Settings, cache_dir: &Path) -> Option<Value> {
    let args = serde_json::from_value(args).ok()?;
    crate::extract::run(args, settings, cache_dir).ok()
}
