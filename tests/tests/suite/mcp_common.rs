//! Shared helpers of the MCP integration tests: where the third-party MCP software lives
//! (installed by `.ci/setup-mcp.sh` under `$TOOLHOST_MCP_PREFIX`, default
//! `/opt/toolhost-mcp`), fixtures, free ports, and a streamable-HTTP reference server.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use toolhost_tests::require_service;

/// Where `.ci/setup-mcp.sh` installs the MCP servers and the Python SDK.
pub fn prefix() -> PathBuf {
    std::env::var_os("TOOLHOST_MCP_PREFIX")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/opt/toolhost-mcp"))
}

/// `@modelcontextprotocol/server-everything`'s launcher.
pub fn everything() -> PathBuf {
    prefix().join("node_modules/.bin/mcp-server-everything")
}

/// A launcher under `node_modules/.bin` (server-filesystem, server-memory, the
/// Inspector's `mcp-inspector`).
pub fn npm_bin(name: &str) -> PathBuf {
    prefix().join("node_modules/.bin").join(name)
}

/// Fail the test, naming what is missing, unless npm launcher `name` is installed.
pub fn require_npm_bin(name: &str) {
    require_service(
        npm_bin(name).exists(),
        &format!("{name} under {} (run .ci/setup-mcp.sh)", prefix().display()),
    )
}

/// `mcp-server-time` (PyPI).
pub fn time_server() -> PathBuf {
    prefix().join("venv/bin/mcp-server-time")
}

/// The virtualenv's Python, with the `mcp` SDK.
pub fn python() -> PathBuf {
    prefix().join("venv/bin/python")
}

/// Fail the test, naming what is missing, unless the MCP software is installed.
pub fn require_mcp_software() {
    let present = everything().exists() && time_server().exists() && python().exists();
    require_service(
        present,
        &format!(
            "the MCP test software under {} (run .ci/setup-mcp.sh)",
            prefix().display()
        ),
    )
}

/// A file of `tests/fixtures/mcp/`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/mcp")
        .join(name)
}

/// A TOML string literal.
pub fn toml_str(value: &Path) -> String {
    toml_string(&value.display().to_string())
}

/// A TOML string literal.
pub fn toml_string(value: &str) -> String {
    format!("\"{}\"", value.replace('\\', "\\\\").replace('"', "\\\""))
}

/// A port nothing listens on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

/// server-everything serving streamable HTTP on a loopback port; killed on drop.
pub struct EverythingHttp {
    child: Child,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    /// Its port.
    pub port: u16,
}

impl EverythingHttp {
    /// Start it and wait until it accepts connections.
    pub fn start() -> Self {
        Self::start_on(free_port())
    }

    /// Start it on `port`.
    pub fn start_on(port: u16) -> Self {
        let child = Command::new(everything())
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start server-everything streamableHttp");
        let deadline = Instant::now() + Duration::from_secs(60);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "server-everything did not listen on {port}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        EverythingHttp {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
            port,
        }
    }

    /// Kill it now.
    pub fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for EverythingHttp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Non-zombie processes whose id is `pid` (the process is gone when this is false).
pub fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z"),
        Err(_) => false,
    }
}

/// Wait up to 10 s for `pid` to be gone.
pub fn wait_gone(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while process_alive(pid) {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    true
}

/// The process group of `pid` (from /proc).
pub fn process_group(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    // state ppid pgrp ...
    rest.split_whitespace().nth(2)?.parse().ok()
}

/// SIGKILL the process group led by `pid` — only after checking that `pid` leads its
/// own group and that it is not this test's group.
pub fn kill_process_group(pid: u32) {
    let group = process_group(pid).expect("the process exists");
    assert_eq!(group, pid, "{pid} does not lead its own process group");
    assert_ne!(
        Some(group),
        process_group(std::process::id()),
        "refusing to kill the test's own process group"
    );
    // Not the `kill` binary: procps 4.0.2's `kill -9 -PGID` can signal far more than
    // the group.
    let pgid = libc::pid_t::try_from(pid).expect("pid fits pid_t");
    assert!(pgid > 1);
    // SAFETY: killpg only sends a signal to the group checked above.
    let rc = unsafe { libc::killpg(pgid, libc::SIGKILL) };
    assert_eq!(
        rc,
        0,
        "killpg({pgid}) failed: {}",
        std::io::Error::last_os_error()
    );
}

/// Run the Python driver with `spec`; its JSON report.
pub fn python_client(spec: &Value) -> Value {
    let out = Command::new(python())
        .arg(fixture("python_client.py"))
        .arg(spec.to_string())
        .output()
        .expect("run the Python MCP client");
    assert!(
        out.status.success(),
        "python client failed\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "python client printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// Config sections proxying the time server and three tools of server-everything.
pub fn proxied_servers() -> String {
    format!(
        "[mcp_servers.time]\ncommand = {}\nargs = [\"--local-timezone=UTC\"]\n[mcp_servers.everything]\ncommand = {}\ntools = {{ include = [\"get-sum\", \"echo\", \"trigger-long-running-operation\"] }}\n",
        toml_str(&time_server()),
        toml_str(&everything())
    )
}

/// Poll `check` for up to 10 s.
pub fn wait_until(check: impl Fn() -> bool) -> bool {
    for _ in 0..200 {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}
