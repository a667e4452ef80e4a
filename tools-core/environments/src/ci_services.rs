//! Where the live services of `.ci/setup-terminal.sh` are (podman's Docker-compatible
//! socket, the test sshd) and the other `TOOLHOST_TEST_*` variables the setup scripts
//! export: read from the environment, or from the file the scripts write
//! (`$TOOLHOST_CI_ENV`, default `/tmp/toolhost-ci/env`), so a plain `cargo test` finds
//! them after the scripts ran once.
//!
//! The one reader of those variables for every test and bench that needs a service:
//! this crate's remote-backend tests, tools-core's `terminal_roundtrip` bench and the
//! integration tests (`toolhost_tests::ci_services`). It lives here, at the bottom of
//! the dependency graph, because this crate's own tests need it; other crates reach it
//! through the `test-support` feature, enabled from their `[dev-dependencies]`
//! (docs/testing.md). It only finds services: a test that needs one fails when it is
//! missing (`require`/`require_service`), a bench skips it.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::settings::{DockerSettings, SshSettings};

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

/// podman's service (`TOOLHOST_TEST_DOCKER_HOST`, `_IMAGE`) as `[terminal.docker]`
/// settings with the defaults otherwise, when it is set up and its socket exists.
pub fn docker() -> Option<DockerSettings> {
    let host = var("TOOLHOST_TEST_DOCKER_HOST")?;
    let image = var("TOOLHOST_TEST_DOCKER_IMAGE")?;
    let socket = host.strip_prefix("unix://").unwrap_or(&host);
    std::path::Path::new(socket)
        .exists()
        .then(|| DockerSettings {
            host,
            image,
            ..DockerSettings::default()
        })
}

/// The test sshd (`TOOLHOST_TEST_SSH_HOST`, `_PORT`, `_USER`, `_KEY`, `_KNOWN_HOSTS`)
/// as `[terminal.ssh]` settings with the defaults otherwise, when it is set up and its
/// key exists.
pub fn ssh() -> Option<SshSettings> {
    let ssh = SshSettings {
        host: var("TOOLHOST_TEST_SSH_HOST")?,
        port: var("TOOLHOST_TEST_SSH_PORT")?.parse().ok()?,
        user: var("TOOLHOST_TEST_SSH_USER")?,
        key: var("TOOLHOST_TEST_SSH_KEY")?,
        known_hosts_file: var("TOOLHOST_TEST_SSH_KNOWN_HOSTS")?,
        ..SshSettings::default()
    };
    std::path::Path::new(&ssh.key).exists().then_some(ssh)
}
