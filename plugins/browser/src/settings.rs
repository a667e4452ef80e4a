//! [`Settings`]: the plugin's `[plugins.config.browser]` table, and where the Chromium
//! binary comes from (setting, `TOOLHOST_CHROMIUM`, then the usual names on `PATH`).

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Environment variable naming the Chromium binary (CI sets it, see .ci/setup-browser.sh).
pub const CHROMIUM_ENV: &str = "TOOLHOST_CHROMIUM";

/// Binary names tried on `PATH` when nothing is configured.
const CANDIDATES: [&str; 5] = [
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "chrome",
];

/// The plugin configuration.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// The Chromium/Chrome binary (default: auto-detected).
    pub chromium: Option<PathBuf>,
    /// A remote DevTools websocket (`ws://host:port/devtools/browser/…`); when set no local
    /// browser is started.
    pub cdp_url: Option<String>,
    /// PEM file of CA certificates trusted for a `wss://` `cdp_url`, besides the system's
    /// roots (a self-signed endpoint: its own certificate). Verification cannot be
    /// switched off (`tls.rs`).
    pub cdp_ca_file: Option<PathBuf>,
    /// Allow navigation to private, loopback and link-local addresses (metadata
    /// addresses stay refused).
    pub allow_private_networks: bool,
    /// Hosts exempt from the internal-address check (`toolhost-netpolicy`).
    pub allowed_hosts: Vec<String>,
    /// Where downloads go: one folder per task below it (default
    /// `<home>/browser_downloads`). The model cannot move it (`downloads.rs`).
    pub download_dir: Option<PathBuf>,
    /// The workspace `DOM.setFileInputFiles` may upload from (default: the directory
    /// toolhost runs in; `uploads.rs`).
    pub upload_dir: Option<PathBuf>,
    /// The toolhost home (from the host, not the configuration).
    #[serde(skip)]
    pub home: Option<PathBuf>,
    /// A task's browser is closed after this many idle seconds.
    pub idle_timeout_secs: u64,
    /// Where `browser_vision` saves screenshots (default: `<home>/browser_screenshots`).
    pub screenshot_dir: Option<PathBuf>,
    /// Seconds a single page operation may take.
    pub command_timeout_secs: u64,
    /// The vision model `browser_vision` asks (`[plugins.config.browser.vision]`).
    pub vision: crate::vision::VisionSettings,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            chromium: None,
            cdp_url: None,
            cdp_ca_file: None,
            allow_private_networks: false,
            allowed_hosts: Vec::new(),
            download_dir: None,
            upload_dir: None,
            home: None,
            idle_timeout_secs: 300,
            screenshot_dir: None,
            command_timeout_secs: 30,
            vision: crate::vision::VisionSettings::default(),
        }
    }
}

impl Settings {
    /// The address policy these settings describe.
    pub fn policy(&self) -> toolhost_netpolicy::Policy {
        toolhost_netpolicy::Policy {
            allow_private: self.allow_private_networks,
            allowed_hosts: self.allowed_hosts.clone(),
        }
    }

    /// The Chromium binary to start, if any can be found.
    pub fn chromium_binary(&self) -> Option<PathBuf> {
        if let Some(path) = &self.chromium {
            return Some(path.clone());
        }
        if let Some(path) = std::env::var_os(CHROMIUM_ENV).filter(|p| !p.is_empty()) {
            return Some(PathBuf::from(path));
        }
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .flat_map(|dir| CANDIDATES.iter().map(move |name| dir.join(name)))
            .find(|candidate| is_executable(candidate))
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
