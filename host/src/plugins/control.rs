//! How `toolhost plugins reload NAME` reaches hosts that are already running (an MCP
//! server, a chat): every host with a process plugin listens on a FIFO,
//! `<home>/run/plugin-hosts/<pid>.fifo`, for lines `reload NAME`, and reloads that
//! plugin (see [`super::reload`]) on a thread of its own. The CLI writes the line to
//! every FIFO there; one that nobody reads (`ENXIO`: its host is gone) is removed.
//!
//! The FIFO is created mode 0600 in a 0700 directory: only the home's owner can ask.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{Mode, OFlags};
use tools_core::{Home, Hooks, Registry};

use super::{Isolation, PluginSet, PluginStatus};

/// Where the FIFOs of running hosts are.
pub fn control_dir(home: &Home) -> PathBuf {
    home.root().join("run").join("plugin-hosts")
}

/// This process's FIFO.
fn own_fifo(home: &Home) -> PathBuf {
    control_dir(home).join(format!("{}.fifo", std::process::id()))
}

/// Why the reload channel could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// Creating the directory or FIFO failed.
    #[error("cannot create the reload channel {path}: {source}")]
    Create {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

fn create_fifo(path: &Path) -> Result<(), ControlError> {
    let err = |source: std::io::Error| ControlError::Create {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(err)?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(err)?;
    }
    let _ = std::fs::remove_file(path);
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        Mode::from_raw_mode(0o600),
        0,
    )
    .map_err(|e| err(e.into()))
}

/// Listen for reload requests when `set` has a loaded process plugin; the FIFO's path
/// (remove it with [`stop_listening`] on shutdown).
pub fn listen(
    home: &Home,
    set: &PluginSet,
    registry: &Arc<Registry>,
    hooks: &Arc<Hooks>,
) -> Option<PathBuf> {
    let has_process = set
        .records
        .iter()
        .any(|r| r.status == PluginStatus::Loaded && r.isolation == Isolation::Process);
    if !has_process {
        return None;
    }
    let path = own_fifo(home);
    if let Err(error) = create_fifo(&path) {
        tracing::warn!(%error, "plugins reload: no reload channel");
        return None;
    }
    let (set, registry, hooks, fifo) = (
        set.clone(),
        Arc::clone(registry),
        Arc::clone(hooks),
        path.clone(),
    );
    let spawned = std::thread::Builder::new()
        .name("plugin-reload".into())
        .spawn(move || serve(&fifo, &set, &registry, &hooks));
    if let Err(error) = spawned {
        tracing::warn!(%error, "plugins reload: no reload thread");
        let _ = std::fs::remove_file(&path);
        return None;
    }
    Some(path)
}

fn serve(fifo: &Path, set: &PluginSet, registry: &Arc<Registry>, hooks: &Arc<Hooks>) {
    loop {
        // Blocks until a writer opens the FIFO; ends when the FIFO is gone.
        let Ok(file) = File::open(fifo) else {
            return;
        };
        for line in BufReader::new(file).lines() {
            let Ok(line) = line else { break };
            let Some(name) = line.trim().strip_prefix("reload ") else {
                continue;
            };
            match set.reload(name.trim(), registry, hooks) {
                Ok(record) => tracing::info!(
                    plugin = %record.name,
                    tools = record.tools.len(),
                    pid = ?record.pid,
                    "plugin reloaded on request"
                ),
                Err(error) => tracing::warn!(%error, "plugin reload requested"),
            }
        }
    }
}

/// Remove this host's FIFO (its thread then stays blocked until the process exits).
pub fn stop_listening(path: &Path) {
    let _ = std::fs::remove_file(path);
}

/// Ask every running host of `home` to reload `name`; how many were asked. Stale FIFOs
/// are removed.
pub fn request_reload(home: &Home, name: &str) -> usize {
    let Ok(entries) = std::fs::read_dir(control_dir(home)) else {
        return 0;
    };
    let mut asked = 0;
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "fifo") {
            continue;
        }
        let opened = rustix::fs::open(
            &path,
            OFlags::WRONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        );
        match opened {
            Ok(fd) => {
                let mut file = File::from(fd);
                if writeln!(file, "reload {name}").is_ok() {
                    asked += 1;
                }
            }
            Err(rustix::io::Errno::NXIO) => {
                let _ = std::fs::remove_file(&path);
            }
            Err(error) => tracing::warn!(%error, path = %path.display(), "cannot ask a host"),
        }
    }
    asked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_nobody_reads_is_removed_and_not_counted() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::at(dir.path());
        let stale = control_dir(&home).join("1.fifo");
        create_fifo(&stale).unwrap();
        assert_eq!(request_reload(&home, "x"), 0);
        assert!(!stale.exists());
    }

    #[test]
    fn a_listening_fifo_receives_the_request() {
        use std::io::Read;
        let dir = tempfile::tempdir().unwrap();
        let home = Home::at(dir.path());
        let fifo = control_dir(&home).join("2.fifo");
        create_fifo(&fifo).unwrap();
        // The reading end is open (as a listening host's is), so the writer gets in.
        let reader =
            rustix::fs::open(&fifo, OFlags::RDONLY | OFlags::NONBLOCK, Mode::empty()).unwrap();
        assert_eq!(request_reload(&home, "demo"), 1);
        let mut line = String::new();
        File::from(reader).read_to_string(&mut line).unwrap();
        assert_eq!(line, "reload demo\n");
        assert!(fifo.exists());
    }
}
