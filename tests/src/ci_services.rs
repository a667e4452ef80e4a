//! Where the live services of `.ci/setup-terminal.sh` are (podman's Docker-compatible
//! socket, the test sshd, bubblewrap): read from the environment, or from the file the
//! setup script writes (`$TOOLHOST_CI_ENV`, default `/tmp/toolhost-ci/env`), so a plain
//! `cargo test` finds them after the script ran once.

use std::collections::HashMap;
use std::sync::OnceLock;

fn env_file() -> &'static HashMap<String, String> {
    static FILE: OnceLock<HashMap<String, String>> = OnceLock::new();
    FILE.get_or_init(|| {
        let path =
            std::env::var("TOOLHOST_CI_ENV").unwrap_or_else(|_| "/tmp/toolhost-ci/env".into());
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| line.trim().strip_prefix("export "))
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_string(), v.trim_matches(['"', '\'']).to_string()))
            .collect()
    })
}

/// A service variable: the environment first, then the setup script's file.
pub fn var(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .filter(|v| !v.is_empty())
        .or_else(|| env_file().get(name).cloned())
}

/// Docker endpoint and image, when the podman service is set up.
pub fn docker() -> Option<(String, String)> {
    let host = var("TOOLHOST_TEST_DOCKER_HOST")?;
    let image = var("TOOLHOST_TEST_DOCKER_IMAGE")?;
    let socket = host.strip_prefix("unix://").unwrap_or(&host);
    std::path::Path::new(socket)
        .exists()
        .then_some((host, image))
}

/// The test sshd: host, port, user, key, known_hosts.
pub struct Ssh {
    /// Host.
    pub host: String,
    /// Port.
    pub port: u16,
    /// User.
    pub user: String,
    /// Private key.
    pub key: String,
    /// known_hosts file.
    pub known_hosts: String,
}

/// The test sshd, when it is set up.
pub fn ssh() -> Option<Ssh> {
    let ssh = Ssh {
        host: var("TOOLHOST_TEST_SSH_HOST")?,
        port: var("TOOLHOST_TEST_SSH_PORT")?.parse().ok()?,
        user: var("TOOLHOST_TEST_SSH_USER")?,
        key: var("TOOLHOST_TEST_SSH_KEY")?,
        known_hosts: var("TOOLHOST_TEST_SSH_KNOWN_HOSTS")?,
    };
    std::path::Path::new(&ssh.key).exists().then_some(ssh)
}
