//! `browser_vision`'s model call: the page's screenshot and the question, sent to an
//! OpenAI-compatible vision model (`POST <base_url>/chat/completions`) with the prompt
//! Hermes uses for browser screenshots; the model's answer is the analysis.
//!
//! Configured by `[plugins.config.browser.vision]` (`base_url`, `model`, `api_key_env`,
//! `timeout_secs`). Without a key (and `api_key_env` not emptied for a keyless local
//! server) no call is made: the screenshot is saved and named, and attached as an image
//! for the agent loop's own model (`_images`), which can look at it itself.

use std::time::Duration;

use base64::Engine as _;
use serde::Deserialize;
use serde_json::{Value, json};

/// The `[plugins.config.browser.vision]` table.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct VisionSettings {
    /// The API root, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`.
    pub base_url: String,
    /// The model name.
    pub model: String,
    /// The environment variable holding the API key (empty: send none, for local
    /// servers).
    pub api_key_env: String,
    /// Seconds to wait for the model (local vision models can be slow).
    pub timeout_secs: u64,
}

impl Default for VisionSettings {
    fn default() -> Self {
        VisionSettings {
            base_url: "https://api.openai.com/v1".into(),
            model: "gpt-4o-mini".into(),
            api_key_env: "OPENAI_API_KEY".into(),
            timeout_secs: 120,
        }
    }
}

/// Whether and how the model can be called.
#[derive(Debug, PartialEq, Eq)]
pub enum Access {
    /// Call it, with this key (none for keyless servers).
    Call(Option<String>),
    /// No key: the variable to set.
    NoKey(String),
}

impl VisionSettings {
    /// The key, from the environment.
    pub fn access(&self) -> Access {
        if self.api_key_env.is_empty() {
            return Access::Call(None);
        }
        match std::env::var(&self.api_key_env) {
            Ok(key) if !key.trim().is_empty() => Access::Call(Some(key.trim().to_string())),
            _ => Access::NoKey(self.api_key_env.clone()),
        }
    }
}

/// Why the analysis failed.
#[derive(Debug, thiserror::Error)]
pub enum VisionError {
    /// The request could not be made or answered.
    #[error("the vision model could not be reached: {0}")]
    Transport(String),
    /// The model answered with an error status.
    #[error("the vision model answered HTTP {status}: {body}")]
    Status {
        /// HTTP status.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// The answer was not a chat completion with text.
    #[error("the vision model's answer is not a chat completion with text: {0}")]
    Answer(String),
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

/// The request body for `question` about the PNG `screenshot`.
pub fn request_body(settings: &VisionSettings, question: &str, screenshot: &[u8]) -> Value {
    let prompt = format!(
        "You are analysing a screenshot of a web browser.\n\nThe question: {question}\n\n\
         Answer it from what you see in the screenshot, in detail. Describe interactive \
         elements where they matter; if there is a verification challenge or CAPTCHA, say \
         what kind and what action it needs."
    );
    let data = base64::engine::general_purpose::STANDARD.encode(screenshot);
    json!({
        "model": settings.model,
        "messages": [{
            "role": "user",
            "content": [
                { "type": "text", "text": prompt },
                { "type": "image_url", "image_url": { "url": format!("data:image/png;base64,{data}") } }
            ]
        }],
        "max_tokens": 2000,
        "temperature": 0.1,
    })
}

/// Ask the model `question` about `screenshot`; its answer.
pub fn analyse(
    settings: &VisionSettings,
    key: Option<&str>,
    question: &str,
    screenshot: &[u8],
) -> Result<String, VisionError> {
    // reqwest is built without a default TLS provider (its own, aws-lc-rs, brings a long
    // C build): ring becomes this library's default unless one is set already.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(settings.timeout_secs.max(1)))
        .build()
        .map_err(|e| VisionError::Transport(e.to_string()))?;
    let url = format!(
        "{}/chat/completions",
        settings.base_url.trim_end_matches('/')
    );
    let mut request = client
        .post(url)
        .json(&request_body(settings, question, screenshot));
    if let Some(key) = key {
        request = request.bearer_auth(key);
    }
    let response = request
        .send()
        .map_err(|e| VisionError::Transport(e.to_string()))?;
    let status = response.status();
    let text = response.text().unwrap_or_default();
    if !status.is_success() {
        return Err(VisionError::Status {
            status: status.as_u16(),
            body: text.chars().take(300).collect(),
        });
    }
    let completion: Completion =
        serde_json::from_str(&text).map_err(|e| VisionError::Answer(e.to_string()))?;
    let analysis = completion
        .choices
        .into_iter()
        .next()
        .and_then(|c| c.message.content)
        .map(|t| t.trim().to_string())
        .unwrap_or_default();
    if analysis.is_empty() {
        return Err(VisionError::Answer("no text".into()));
    }
    Ok(analysis)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_carries_the_question_and_the_screenshot() {
        let body = request_body(&VisionSettings::default(), "is there a login form?", b"PNG");
        let content = &body["messages"][0]["content"];
        assert!(
            content[0]["text"]
                .as_str()
                .unwrap()
                .contains("is there a login form?")
        );
        assert_eq!(content[1]["image_url"]["url"], "data:image/png;base64,UE5H");
        assert_eq!(body["model"], "gpt-4o-mini");
    }

    #[test]
    fn an_empty_key_variable_means_a_keyless_server() {
        let keyless = VisionSettings {
            api_key_env: String::new(),
            ..VisionSettings::default()
        };
        assert_eq!(keyless.access(), Access::Call(None));
        let missing = VisionSettings {
            api_key_env: "TOOLHOST_TEST_SURELY_UNSET_KEY".into(),
            ..VisionSettings::default()
        };
        assert_eq!(
            missing.access(),
            Access::NoKey("TOOLHOST_TEST_SURELY_UNSET_KEY".into())
        );
    }
}
