//! The `vision_analyze` tool: an image (file, URL or `data:` URL) and a question,
//! answered by an OpenAI-compatible vision model (`POST <base_url>/chat/completions`).

mod image_prep;

use std::time::Duration;

use serde::Deserialize;
use toolhost_plugin_api::prelude::*;

use crate::settings::Settings;

/// The `[plugins.config.web.vision]` table.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VisionSettings {
    /// The API root, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`.
    pub base_url: String,
    /// The model name.
    pub model: String,
    /// The environment variable holding the API key (empty: send none, for local
    /// servers).
    pub api_key_env: String,
    /// Longest side, in pixels, of the image sent; larger images are scaled down.
    pub max_side: u32,
    /// Largest image sent without re-encoding, bytes.
    pub max_send_bytes: usize,
    /// Seconds to wait for the model.
    pub timeout_secs: u64,
}

impl Default for VisionSettings {
    fn default() -> Self {
        VisionSettings {
            base_url: "https://api.openai.com/v1".into(),
            model: "gpt-4o-mini".into(),
            api_key_env: "OPENAI_API_KEY".into(),
            max_side: 1568,
            max_send_bytes: 4 * 1024 * 1024,
            timeout_secs: 120,
        }
    }
}

impl VisionSettings {
    /// The API key, or why the tool is unavailable.
    pub fn key(&self) -> Result<Option<String>, String> {
        if self.api_key_env.is_empty() {
            return Ok(None);
        }
        match std::env::var(&self.api_key_env) {
            Ok(key) if !key.trim().is_empty() => Ok(Some(key)),
            _ => Err(format!(
                "vision_analyze needs {} (set api_key_env = \"\" in [plugins.config.web.vision] for a server without a key)",
                self.api_key_env
            )),
        }
    }
}

/// The arguments of `vision_analyze`.
#[derive(Debug, Deserialize)]
pub struct VisionArgs {
    /// A file path, an http(s) URL or a `data:` URL.
    image_url: String,
    /// What to ask about the image.
    question: String,
}

/// The model-facing schema (Hermes' parameters).
pub fn schema() -> Value {
    json!({
        "description": "Look at an image and answer a question about it, using a vision model. Accepts a local file path, an http(s) URL or a data: URL; PNG, JPEG, GIF and WebP.",
        "parameters": {
            "type": "object",
            "properties": {
                "image_url": { "type": "string", "description": "Image file path, http(s) URL or data: URL" },
                "question": { "type": "string", "description": "What you want to know about the image" }
            },
            "required": ["image_url", "question"]
        }
    })
}

#[derive(Deserialize)]
struct Completion {
    choices: Vec<Choice>,
}

#[derive(Deserialize)]
struct Choice {
    message: Message,
}

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    content: Option<String>,
}

fn failure(message: impl std::fmt::Display) -> ToolResult {
    Ok(json!({ "success": false, "error": message.to_string() }))
}

/// Run `vision_analyze`: `fetching` governs URL images (address policy, size cap).
pub fn run(
    args: VisionArgs,
    vision: &VisionSettings,
    key: Option<&str>,
    fetching: &Settings,
) -> ToolResult {
    if args.image_url.trim().is_empty() {
        return failure("image_url is empty");
    }
    let data_url = match image_prep::load(args.image_url.trim(), fetching)
        .and_then(|bytes| image_prep::to_data_url(&bytes, vision.max_side, vision.max_send_bytes))
    {
        Ok(url) => url,
        Err(e) => return failure(e),
    };
    let question = match args.question.trim() {
        "" => "Describe this image in detail.",
        q => q,
    };
    let body = json!({
        "model": vision.model,
        "messages": [{
            "role": "user",
            "content": [
                { "type": "text", "text": question },
                { "type": "image_url", "image_url": { "url": data_url } }
            ]
        }]
    });
    let client = match crate::tls::client_builder()
        .timeout(Duration::from_secs(vision.timeout_secs))
        .build()
    {
        Ok(c) => c,
        Err(e) => return failure(e),
    };
    let url = format!("{}/chat/completions", vision.base_url.trim_end_matches('/'));
    let mut request = client.post(url).json(&body);
    if let Some(key) = key {
        request = request.bearer_auth(key);
    }
    let response = match request.send() {
        Ok(r) => r,
        Err(e) => return failure(format!("the vision model could not be reached: {e}")),
    };
    let status = response.status();
    let text = response.text().unwrap_or_default();
    if !status.is_success() {
        let head: String = text.chars().take(300).collect();
        return failure(format!(
            "the vision model answered HTTP {}: {head}",
            status.as_u16()
        ));
    }
    match serde_json::from_str::<Completion>(&text) {
        Ok(c) => match c.choices.into_iter().next().and_then(|c| c.message.content) {
            Some(analysis) => Ok(json!({ "success": true, "analysis": analysis })),
            None => failure("the vision model returned no text"),
        },
        Err(e) => failure(format!(
            "the vision model's answer is not a chat completion: {e}"
        )),
    }
}

#[cfg(test)]
mod tests;
