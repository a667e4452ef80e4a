//! What the file tools refuse to touch, and why (the messages go to the model).
//!
//! Reads: device files that never end or block (`/dev/zero`, `/dev/stdin`,
//! `/proc/kmsg`, ...) and `/proc` files that leak secrets or memory layout (secret
//! files are [`super::secret_files`]'). Writes: system paths, credential stores
//! (`~/.ssh`, `~/.aws`, ...) and toolhost's own configuration, state, plugin and cron
//! directories — a prompt-injected agent must not be able to switch off approvals,
//! drop a plugin that runs on the next start, or rewrite a cron job. Those writes are
//! refused outright, never put to an approval the model could answer; the refusal names
//! the path as the model wrote it, never toolhost's home. Writes into `<home>/scripts`
//! and `<home>/skills`, which a human may allow, are [`super::guarded_write`]'s.
//!
//! Like Hermes' guards this is defense in depth, not a sandbox: the terminal tool runs
//! as the same user. Both sides of every comparison are taken as written and with
//! symlinks resolved (a symlinked home, `ln -s ~/.ssh keys; write
//! keys/authorized_keys`), and [`checked_write_target`] returns the canonical path the
//! write must then use: the local backend writes it without following any symlink,
//! so a link flipped after the check cannot redirect the write.

use std::path::{Path, PathBuf};

use crate::files::FileSystem;
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
    "/proc/kmsg",
    "/dev/kmsg",
    "/sys/kernel/tracing/trace_pipe",
    "/sys/kernel/debug/tracing/trace_pipe",
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

/// The path a write to `path` must use — its canonical target on `fs` — or why it must
/// not be written. `home` is toolhost's home; `shown` is the path as the model wrote it.
pub fn checked_write_target(
    fs: &dyn FileSystem,
    path: &Path,
    shown: &str,
    home: &Home,
) -> Result<PathBuf, String> {
    let target = fs.canonicalize(path);
    let user_homes = both_spellings(fs.home_dir(), |p| fs.canonicalize(p));
    // toolhost's home is always on the host.
    let toolhost_homes = home.spellings();
    for candidate in [path, target.as_path()] {
        if let Some(reason) = classify_write(candidate, shown, &user_homes, &toolhost_homes) {
            return Err(reason);
        }
    }
    Ok(target)
}

/// Why `path` must not be written, or `None` (see [`checked_write_target`]).
#[cfg(test)]
pub fn write_block_reason(
    fs: &dyn FileSystem,
    path: &Path,
    shown: &str,
    home: &Home,
) -> Option<String> {
    checked_write_target(fs, path, shown, home).err()
}

/// `dir` as given and resolved (one entry when they are equal).
fn both_spellings(dir: Option<PathBuf>, resolve: impl Fn(&Path) -> PathBuf) -> Vec<PathBuf> {
    let Some(dir) = dir else {
        return Vec::new();
    };
    let real = resolve(&dir);
    if real == dir {
        vec![dir]
    } else {
        vec![dir, real]
    }
}

fn under(path: &Path, dir: &Path) -> bool {
    path.starts_with(dir)
}

fn classify_write(
    path: &Path,
    shown: &str,
    user_homes: &[PathBuf],
    toolhost_homes: &[Home],
) -> Option<String> {
    let system = SYSTEM_PREFIXES.iter().any(|p| under(path, Path::new(p)))
        || SYSTEM_EXACT.iter().any(|p| path == Path::new(p));
    if system {
        return Some(format!(
            "Refusing to write to sensitive system path: {shown}\nUse the terminal tool \
             with sudo if you need to modify system files."
        ));
    }
    let credential = user_homes.iter().any(|user_home| {
        DENIED_HOME_FILES.iter().any(|f| path == user_home.join(f))
            || DENIED_HOME_DIRS
                .iter()
                .any(|d| under(path, &user_home.join(d)))
    });
    if credential {
        return Some(format!(
            "Write denied: '{shown}' is a protected system/credential file."
        ));
    }
    let toolhost = toolhost_homes.iter().any(|home| {
        path == home.config_file()
            || under(path, &home.state_dir())
            || under(path, &home.plugins_dir())
            || under(path, &home.root().join("cron"))
    });
    if toolhost {
        return Some(format!(
            "Refusing to write to toolhost's own configuration or state: {shown}\nThe agent \
             cannot modify security-sensitive configuration, stored state or plugins, and \
             this cannot be approved from a tool call; ask the user to make the change \
             themselves."
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
            "/proc/kmsg",
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
            home.root().join("cron/cron.db"),
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

    #[cfg(unix)]
    #[test]
    fn symlinked_toolhost_home_guards_the_real_path_too() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real-home");
        std::fs::create_dir_all(real.join("state")).unwrap();
        std::fs::write(real.join("config.toml"), "").unwrap();
        let link = dir.path().join("link-home");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let fs = LocalFileSystem::new(dir.path());
        // Home given as the link, write aimed at the real path, and the other way round.
        for (home_at, target) in [
            (&link, real.join("config.toml")),
            (&link, real.join("state/memories/MEMORY.md")),
            (&real, link.join("plugins/x/libx.so")),
        ] {
            let home = Home::at(home_at);
            let shown = target.display().to_string();
            assert!(
                write_block_reason(&fs, &target, &shown, &home).is_some(),
                "{shown} with home {}",
                home_at.display()
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn symlinked_user_home_guards_the_real_credential_path() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("users/u");
        std::fs::create_dir_all(real.join(".ssh")).unwrap();
        let link = dir.path().join("home-u");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let fs = LocalFileSystem::new(dir.path()).with_home(&link);
        let home = Home::at(dir.path().join("toolhost"));
        let target = real.join(".ssh/authorized_keys");
        let shown = target.display().to_string();
        assert!(write_block_reason(&fs, &target, &shown, &home).is_some());
        let netrc = real.join(".netrc");
        assert!(write_block_reason(&fs, &netrc, ".netrc", &home).is_some());
    }

    #[test]
    fn refusal_does_not_reveal_the_toolhost_home() {
        let fs = LocalFileSystem::new("/");
        let home = Home::at("/srv/secret-place/toolhost");
        let reason = write_block_reason(&fs, &home.config_file(), "../config.toml", &home).unwrap();
        assert!(!reason.contains("secret-place"), "{reason}");
        assert!(reason.contains("../config.toml"), "{reason}");
    }
}
