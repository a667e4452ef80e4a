//! web: `web_extract`, `web_search` (toolset `web`) and `vision_analyze` (toolset
//! `vision`), as a bundled plugin.
//!
//! These tools need an HTTP client with TLS, an HTML parser, a readability extractor,
//! a PDF reader and image codecs — dependencies the host binary should not load for
//! every short command (README, "Why some tools are plugins"). Requests run on the
//! handler's worker thread with the blocking `reqwest` client, whose runtime is the
//! plugin's own.

#[doc(hidden)]
pub mod bench_api;
mod convert;
mod extract;
mod extract_api;
mod fetch;
mod landmark;
#[cfg(test)]
mod live_smoke;
mod search;
mod settings;
#[cfg(test)]
mod test_pages;
#[cfg(test)]
mod test_server;
mod tls;
mod vision;
mod window;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use toolhost_plugin_api::prelude::*;

use settings::Settings;

fn parse<T: serde::de::DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    serde_json::from_value(args).map_err(|e| ToolError::invalid_arguments(e.to_string()))
}

fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

fn extract_tool(settings: Arc<Settings>, cache_dir: PathBuf) -> Tool {
    Tool::new("web_extract", "web", move |args, _ctx| {
        extract::run(parse(args)?, &settings, &cache_dir)
    })
    .schema(extract::schema())
    .emoji("📄")
    .max_result_chars(100_000)
    .parallel_safe(true)
}

fn search_tool(settings: Arc<Settings>) -> Tool {
    let check = Arc::clone(&settings);
    Tool::new("web_search", "web", move |args, _ctx| {
        let provider = match search::backend::choose(&settings.search, &env_var) {
            Ok(p) => p,
            Err(e) => return Ok(json!({ "success": false, "error": e.to_string() })),
        };
        let client = search::client(Duration::from_secs(settings.timeout_secs))
            .map_err(|e| ToolError::new(e.to_string()))?;
        search::run(parse(args)?, provider.as_ref(), &client)
    })
    .schema(search::schema())
    .check(move || {
        search::backend::choose(&check.search, &env_var)
            .map(|_| ())
            .map_err(|e| e.to_string())
    })
    .emoji("🔍")
    .max_result_chars(100_000)
    .parallel_safe(true)
}

fn vision_tool(settings: Arc<Settings>) -> Tool {
    let check = Arc::clone(&settings);
    Tool::new("vision_analyze", "vision", move |args, _ctx| {
        let key = match settings.vision.key() {
            Ok(key) => key,
            Err(e) => return Ok(json!({ "success": false, "error": e })),
        };
        vision::run(parse(args)?, &settings.vision, key.as_deref(), &settings)
    })
    .schema(vision::schema())
    .check(move || check.vision.key().map(|_| ()))
    .emoji("👁️")
    .parallel_safe(true)
}

fn plugin(host: &Host) -> Result<Plugin, String> {
    let settings: Settings = host
        .settings()
        .map_err(|e| format!("invalid [plugins.config.web] settings: {e}"))?;
    let cache_dir = settings
        .cache_dir
        .clone()
        .unwrap_or_else(|| host.home().join("cache").join("web"));
    let settings = Arc::new(settings);
    Ok(Plugin::new()
        .tool(extract_tool(Arc::clone(&settings), cache_dir))
        .tool(search_tool(Arc::clone(&settings)))
        .tool(vision_tool(settings)))
}

toolhost_plugin_api::export_plugin!(plugin);
