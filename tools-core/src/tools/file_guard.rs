//! What the file tools refuse to touch, and why (the messages go to the model).
//!
//! Reads: device files that never end or block (`/dev/zero`, `/dev/stdin`, ...), `/proc`
//! files that leak secrets or memory layout, and secret-bearing `.env` files. Writes:
//! system paths, credential stores (`~/.ssh`, `~/.aws`, ...) and toolhost's own
//! configuration, state and plugin directories — a prompt-injected agent must not be able
//! to switch off approvals or drop a plugin that runs on the next start.
//!
//! Like Hermes' guards this is defense in depth, not a sandbox: the terminal tool runs
//! as the same user. Paths are checked as resolved (lexically) and, on the local file
//! system, with symlinks followed, so `ln -s ~/.ssh keys; write keys/authorized_keys`
//! is caught too.

use std::path::{Path, PathBuf};

use crate::files::{FileSystem, normalize_lexically};
use crate::home::Home;

/// Exact device paths whose reads never end or block.
const BLOCKED_DEVICES: &[&str] = &[
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
    "/dev/full",
    "/dev/stdin",
    "/dev/tty",
    "/dev/console",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/fd/0",
    "/dev/fd/1",
    "/dev/fd/2",
];

/// `/proc/<pid>/…` files that leak secrets (environment, command lines) or memory
/// layout.
const BLOCKED_PROC_SUFFIXES: &[&str] = &[
    "/environ",
    "/cmdline",
    "/maps",
    "/smaps",
    "/smaps_rollup",
    "/numa_maps",
    "/mem",
    "/auxv",
    "/pagemap",
    "/fd/0",
    "/fd/1",
    "/fd/2",
];

/// Project-local environment files that routinely hold credentials.
const SECRET_ENV_FILES: &[&str] = &[
    ".env",
    ".env.local",
    ".env.development",
    ".env.production",
    ".env.test",
    ".env.staging",
    ".envrc",
];

/// Exact files under `~` that must never be written.
const DENIED_HOME_FILES: &[&str] = &[".netrc", ".pgpass", ".npmrc", ".pypirc", ".git-credentials"];

/// Directories under `~` whose contents must never be written.
const DENIED_HOME_DIRS: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".kube",
    ".docker",
    ".azure",
    ".config/gh",
    ".config/gcloud",
];

/// System locations the file tools never write (use the terminal, with approval).
/// `/dev`, `/proc` and `/sys` are kernel namespaces: an atomic rename there would
/// replace a device node.
const SYSTEM_PREFIXES: &[&str] = &[
    "/dev",
    "/proc",
    "/sys",
    "/etc",
    "/boot",
    "/usr/lib/systemd",
    "/private/etc",
    "/private/var",
];

/// Sockets that grant root when written.
const SYSTEM_EXACT: &[&str] = &["/var/run/docker.sock", "/run/docker.sock"];

/// Why `path` must not be read, or `None`.
pub fn read_block_reason(path: &Path, shown: &str) -> Option<String> {
    if is_blocked_device(path) {
        return Some(format!(
            "Cannot read '{shown}': this is a device file that would block or produce \
             infinite output."
        ));
    }
    if is_secret_env_file(path) {
        return Some(format!(
            "Access denied: {shown} is a secret-bearing environment file and cannot be read \
             to prevent credential leakage. If you need the file's structure, read \
             .env.example instead."
        ));
    }
    None
}

/// True for device and `/proc` paths that hang or leak (symlinks are not followed here;
/// the caller also refuses anything that is not a regular file).
pub fn is_blocked_device(path: &Path) -> bool {
    let Some(text) = path.to_str() else {
        return false;
    };
    if BLOCKED_DEVICES.contains(&text) {
        return true;
    }
    text.starts_with("/proc/") && BLOCKED_PROC_SUFFIXES.iter().any(|s| text.ends_with(s))
}

/// True for `.env`-style files (search results in them are omitted too).
pub fn is_secret_env_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|name| SECRET_ENV_FILES.contains(&name.to_ascii_lowercase().as_str()))
}

/// Why `path` must not be written, or `None`. `home` is toolhost's home.
pub fn write_block_reason(
    fs: &dyn FileSystem,
    path: &Path,
    shown: &str,
    home: &Home,
) -> Option<String> {
    let mut candidates = vec![path.to_path_buf()];
    if fs.kind() == "local"
        && let Some(real) = canonical_local(path)
        && real != path
    {
        candidates.push(real);
    }
    let user_home = fs.home_dir();
    candidates
        .iter()
        .find_map(|p| classify_write(p, shown, user_home.as_deref(), home))
}

/// `path` with symlinks resolved: the path itself if it exists, else its nearest
/// existing ancestor plus the remaining components.
fn canonical_local(path: &Path) -> Option<PathBuf> {
    let mut missing = Vec::new();
    let mut current = path;
    loop {
        if let Ok(real) = std::fs::canonicalize(current) {
            let mut out = real;
            for part in missing.iter().rev() {
                out.push(part);
            }
            return Some(normalize_lexically(&out));
        }
        missing.push(current.file_name()?.to_os_string());
        current = current.parent()?;
    }
}

fn under(path: &Path, dir: &Path) -> bool {
    path.starts_with(dir)
}

fn classify_write(
    path: &Path,
    shown: &str,
    user_home: Option<&Path>,
    home: &Home,
) -> Option<String> {
    let system = SYSTEM_PREFIXES.iter().any(|p| under(path, Path::new(p)))
        || SYSTEM_EXACT.iter().any(|p| path == Path::new(p));
    if system {
        return Some(format!(
            "Refusing to write to sensitive system path: {shown}\nUse the terminal tool \
             with sudo if you need to modify system files."
        ));
    }
    if let Some(user_home) = user_home {
        let credential = DENIED_HOME_FILES.iter().any(|f| path == user_home.join(f))
            || DENIED_HOME_DIRS
                .iter()
                .any(|d| under(path, &user_home.join(d)));
        if credential {
            return Some(format!(
                "Write denied: '{shown}' is a protected system/credential file."
            ));
        }
    }
    let toolhost = path == home.config_file()
        || under(path, &home.state_dir())
        || under(path, &home.plugins_dir());
    if toolhost {
        return Some(format!(
            "Refusing to write to toolhost's own configuration or state: {shown}\nThe agent \
             cannot modify security-sensitive configuration, stored state or plugins; the \
             user can edit {} directly.",
            home.root().display()
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::LocalFileSystem;

    #[test]
    fn read_blocks() {
        let blocked = [
            "/dev/zero",
            "/dev/stdin",
            "/proc/self/environ",
            "/proc/1/task/1/maps",
            "/proc/self/fd/0",
            "/work/app/.env",
            "/work/app/.ENV.local",
        ];
        for p in blocked {
            assert!(read_block_reason(Path::new(p), p).is_some(), "{p}");
        }
        for p in ["/proc/cpuinfo", "/work/app/.env.example", "/dev/null2"] {
            assert!(read_block_reason(Path::new(p), p).is_none(), "{p}");
        }
    }

    #[test]
    fn write_blocks() {
        let fs = LocalFileSystem::new("/");
        let home = Home::at("/nonexistent-toolhost-home");
        let user = fs.home_dir().unwrap_or_else(|| PathBuf::from("/root"));
        let blocked = [
            PathBuf::from("/etc/hosts"),
            PathBuf::from("/boot/grub/grub.cfg"),
            PathBuf::from("/run/docker.sock"),
            PathBuf::from("/dev/sda"),
            PathBuf::from("/sys/kernel/x"),
            user.join(".ssh/authorized_keys"),
            user.join(".aws/credentials"),
            user.join(".netrc"),
            home.config_file(),
            home.state_dir().join("memories/MEMORY.md"),
            home.plugins_dir().join("evil/libevil.so"),
        ];
        for p in &blocked {
            let shown = p.display().to_string();
            assert!(
                write_block_reason(&fs, p, &shown, &home).is_some(),
                "{shown}"
            );
        }
        for p in ["/tmp/x.txt", "/etcetera/x", "/device/x"] {
            assert!(
                write_block_reason(&fs, Path::new(p), p, &home).is_none(),
                "{p}"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn write_block_follows_symlinks_on_local() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::at(dir.path().join("toolhost-home"));
        std::fs::create_dir_all(home.state_dir()).unwrap();
        let link = dir.path().join("innocent");
        std::os::unix::fs::symlink(home.state_dir(), &link).unwrap();
        let fs = LocalFileSystem::new(dir.path());
        let target = link.join("memories/USER.md");
        assert!(write_block_reason(&fs, &target, "innocent/memories/USER.md", &home).is_some());
    }
}
