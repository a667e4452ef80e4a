//! [`Chromium`]: a local headless browser process that cannot outlive us.
//!
//! Three guards keep Chromium from being orphaned: it runs in a process group of its own
//! which [`Drop`] kills as a whole (renderers and zygotes included); it is spawned with
//! `PR_SET_PDEATHSIG = SIGKILL`, so the kernel kills it when we die; and since that
//! signal fires when the *spawning thread* exits, every browser is spawned by one
//! launcher thread that lives as long as the process.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Sender};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::error::BrowserError;

/// Seconds to wait for the DevTools endpoint of a starting browser.
const START_SECS: u64 = 30;

type SpawnRequest = (Command, Sender<std::io::Result<Child>>);

/// A running local Chromium; killed (with its whole process group) on drop.
#[derive(Debug)]
pub struct Chromium {
    child: Child,
    /// The browser-level DevTools websocket.
    pub ws_url: String,
    _profile: tempfile::TempDir,
}

impl Chromium {
    /// Start `binary` headless with a fresh profile and wait for its DevTools endpoint.
    #[allow(unsafe_code)]
    // Chromium, the configured browser: it renders pages the model asks for but runs no model code (network policy: plugins/browser).
    #[allow(clippy::disallowed_methods)]
    pub fn start(binary: &Path) -> Result<Self, BrowserError> {
        let profile = tempfile::Builder::new()
            .prefix("toolhost-browser-")
            .tempdir()?;
        let mut command = Command::new(binary);
        command
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                "--mute-audio",
                "--remote-debugging-port=0",
                "--remote-debugging-address=127.0.0.1",
                "--window-size=1280,800",
                // Element.computedRole / computedName, for the snapshot walker.
                "--enable-blink-features=ComputedAccessibilityInfo",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        // SAFETY: the closure runs in the forked child before exec and only calls
        // `prctl`, which is async-signal-safe.
        unsafe {
            command.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = spawn(command).map_err(|source| BrowserError::Launch {
            path: binary.display().to_string(),
            source,
        })?;
        let mut chromium = Chromium {
            child,
            ws_url: String::new(),
            _profile: profile,
        };
        chromium.ws_url = chromium.wait_for_endpoint()?;
        Ok(chromium)
    }

    /// Chromium writes `port\npath` to `DevToolsActivePort` in its profile once listening.
    fn wait_for_endpoint(&mut self) -> Result<String, BrowserError> {
        let file: PathBuf = self._profile.path().join("DevToolsActivePort");
        let deadline = Instant::now() + Duration::from_secs(START_SECS);
        while Instant::now() < deadline {
            if let Ok(text) = std::fs::read_to_string(&file) {
                let mut lines = text.lines();
                if let (Some(port), Some(path)) = (lines.next(), lines.next()) {
                    return Ok(format!("ws://127.0.0.1:{}{}", port.trim(), path.trim()));
                }
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(BrowserError::Other(format!(
                    "Chromium exited during start-up ({status})"
                )));
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        Err(BrowserError::NoEndpoint(START_SECS))
    }

    /// The process id (also the process group id).
    #[cfg(test)]
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Chromium {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        if let Ok(pgid) = i32::try_from(self.child.id()) {
            // SAFETY: plain syscall; the negative pid addresses the group we created.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Spawn on the launcher thread (see the module header for why).
fn spawn(command: Command) -> std::io::Result<Child> {
    static LAUNCHER: OnceLock<Mutex<Sender<SpawnRequest>>> = OnceLock::new();
    let launcher = LAUNCHER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnRequest>();
        std::thread::Builder::new()
            .name("toolhost-browser-launcher".into())
            .spawn(move || {
                for (mut command, reply) in rx {
                    let _ = reply.send(command.spawn());
                }
            })
            .map(|_| ())
            .unwrap_or(());
        Mutex::new(tx)
    });
    let (reply, answer) = mpsc::channel();
    launcher
        .lock()
        .map_err(|_| std::io::Error::other("launcher lock poisoned"))?
        .send((command, reply))
        .map_err(|_| std::io::Error::other("the launcher thread is gone"))?;
    answer
        .recv()
        .map_err(|_| std::io::Error::other("the launcher thread is gone"))?
}
