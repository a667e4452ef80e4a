//! The plugin's settings: the `[plugins.config.web]` table of `config.toml`.

use std::path::PathBuf;

use serde::Deserialize;

use toolhost_netpolicy::Policy;

use crate::search::backend::SearchSettings;
use crate::vision::VisionSettings;

/// Settings of the web tools; every field has a default, so an absent table works.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// Allow fetching loopback, private and link-local addresses (default `false`: a
    /// prompt-injected page must not make the agent read internal services). Cloud
    /// metadata endpoints stay refused (`toolhost-netpolicy`).
    pub allow_private_networks: bool,
    /// Hosts exempt from the internal-address check (a self-hosted wiki, say).
    pub allowed_hosts: Vec<String>,
    /// Per-request timeout, seconds.
    pub timeout_secs: u64,
    /// Redirects followed per URL.
    pub max_redirects: usize,
    /// Largest response body read, bytes.
    pub max_bytes: u64,
    /// Default per-page character budget of `web_extract`.
    pub char_limit: usize,
    /// Where the full text of truncated pages is saved (default `<home>/cache/web`).
    pub cache_dir: Option<PathBuf>,
    /// Read pages through a provider's extract API (`firecrawl`, `tavily`, `exa`,
    /// `parallel`) instead of fetching them here (`local`, the default).
    pub extract_backend: Option<String>,
    /// Another endpoint for that provider's API.
    pub extract_base_url: Option<String>,
    /// `web_search`'s provider choice.
    pub search: SearchSettings,
    /// `vision_analyze`'s model.
    pub vision: VisionSettings,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            allow_private_networks: false,
            allowed_hosts: Vec::new(),
            timeout_secs: 20,
            max_redirects: 5,
            max_bytes: 10 * 1024 * 1024,
            char_limit: 15_000,
            cache_dir: None,
            extract_backend: None,
            extract_base_url: None,
            search: SearchSettings::default(),
            vision: VisionSettings::default(),
        }
    }
}

impl Settings {
    /// The address policy these settings describe.
    pub fn policy(&self) -> Policy {
        Policy {
            allow_private: self.allow_private_networks,
            allowed_hosts: self.allowed_hosts.clone(),
        }
    }
}
