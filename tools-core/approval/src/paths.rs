//! What a path argument points at, for the rules that care where a command writes or
//! deletes: the root, a system directory, a home directory, a raw block device, a system
//! config file, a credential or shell-rc file, the agent's own config, a project `.env`.
//!
//! Paths are judged lexically (no file system access, so the verdict does not depend on the
//! machine): `~`, `$HOME` and `${HOME}` mean the home directory; `//`, `/./` and `..` are
//! resolved; a trailing `/` or `/*` means the directory itself (its contents).

/// The class of a path, most severe first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PathClass {
    /// `/`, `/*`, `/..`, `//`.
    Root,
    /// `/etc`, `/usr/*`, a root-level glob that could match one.
    SystemDir,
    /// `~`, `$HOME/`, `/home/alice`, `/Users/alice`.
    Home,
    /// `/dev/sda`, `/dev/nvme0n1p1`, `/dev/mmcblk0`, `/dev/disk/by-id/...`.
    RawDevice,
    /// `/proc/sysrq-trigger`.
    Sysrq,
    /// A file or directory inside a system location (`/etc/hosts`, `/boot/...`).
    SystemFile,
    /// `~/.ssh/...`, shell rc files, credential files.
    Sensitive,
    /// toolhost's or Hermes' own configuration or secrets.
    AgentConfig,
    /// A project `.env` file.
    ProjectEnv,
    /// System logs (`/var/log/...`).
    Log,
    /// Anything else.
    Other,
}

const SYSTEM_DIRS: &[&str] = &[
    "bin",
    "boot",
    "dev",
    "etc",
    "home",
    "lib",
    "lib32",
    "lib64",
    "libx32",
    "media",
    "mnt",
    "opt",
    "proc",
    "root",
    "run",
    "sbin",
    "snap",
    "srv",
    "sys",
    "usr",
    "var",
    "Applications",
    "Library",
    "System",
    "Users",
    "Volumes",
    "private",
];

const USR_DIRS: &[&str] = &["bin", "include", "lib", "lib64", "local", "sbin", "share"];

/// Top-level directories whose contents are system configuration or binaries.
const SYSTEM_FILE_ROOTS: &[&str] = &[
    "etc", "boot", "usr", "bin", "sbin", "lib", "lib32", "lib64", "sys", "System", "Library",
];

const RC_FILES: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".zlogin",
    ".kshrc",
    ".cshrc",
    ".tcshrc",
    ".inputrc",
];

const CREDENTIAL_FILES: &[&str] = &[
    ".netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".my.cnf",
];

/// Directories under the home that hold credentials (every file in them is sensitive).
const CREDENTIAL_DIRS: &[&str] = &[
    ".aws",
    ".kube",
    ".docker",
    ".azure",
    ".gnupg",
    ".ssh",
    ".password-store",
    ".vault-token",
];

/// Directories under `~/.config` that hold credentials.
const CONFIG_CREDENTIAL_DIRS: &[&str] = &["gh", "gcloud", "hub", "doctl", "rclone"];

/// Split into components after home folding and lexical normalisation.
/// Returns (is_home_relative, is_absolute, components).
fn components(path: &str) -> (bool, bool, Vec<&str>) {
    let (home, rest) = if let Some(rest) = path.strip_prefix("${HOME}") {
        (true, rest)
    } else if let Some(rest) = path.strip_prefix("$HOME") {
        (true, rest)
    } else if path == "~" || path.starts_with("~/") {
        (true, &path[1..])
    } else {
        (false, path)
    };
    if home && !(rest.is_empty() || rest.starts_with('/')) {
        return (false, false, vec![path]);
    }
    let absolute = home || rest.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in rest.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    (home, absolute, parts)
}

fn has_glob(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

fn is_raw_device_name(name: &str) -> bool {
    let digits_tail = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let letters_then_digits = |s: &str| {
        let letters = s.bytes().take_while(u8::is_ascii_lowercase).count();
        letters > 0 && (letters == s.len() || digits_tail(&s[letters..]))
    };
    for prefix in ["sd", "hd", "vd", "xvd"] {
        if let Some(rest) = name.strip_prefix(prefix)
            && letters_then_digits(rest)
        {
            return true;
        }
    }
    for prefix in [
        "nvme", "mmcblk", "disk", "rdisk", "md", "dm-", "loop", "nbd", "sr",
    ] {
        if let Some(rest) = name.strip_prefix(prefix)
            && !rest.is_empty()
            && rest.as_bytes()[0].is_ascii_digit()
        {
            return true;
        }
    }
    false
}

/// Character devices that are fine to write to.
const SAFE_DEVICES: &[&str] = &[
    "null", "zero", "stdout", "stderr", "stdin", "tty", "random", "urandom", "full", "ptmx",
];

/// True when `path` names a raw block device. `dynamic` means part of the name is only
/// known at run time (`/dev/$DISK`): that counts as a device (fail closed).
pub(crate) fn is_raw_device(path: &str, dynamic: bool) -> bool {
    let (_, absolute, parts) = components(path);
    if !absolute || parts.first() != Some(&"dev") {
        return false;
    }
    match parts.get(1) {
        None => false,
        Some(name) if SAFE_DEVICES.contains(name) => false,
        Some(&"fd") | Some(&"pts") | Some(&"shm") | Some(&"mqueue") => false,
        Some(&"disk") | Some(&"mapper") => parts.len() > 2,
        // Character-device folders; any other folder (`/dev/vg0/root`) is an LVM volume
        // group or similar: a block device (fail closed).
        Some(
            &"net" | &"input" | &"snd" | &"dri" | &"bus" | &"char" | &"cpu" | &"hugepages" | &"usb"
            | &"serial" | &"v4l" | &"vfio" | &"hidraw" | &"tcp" | &"udp",
        ) => false,
        Some(name) if parts.len() > 2 && !has_glob(name) => true,
        Some(name) => is_raw_device_name(name) || dynamic || has_glob(name),
    }
}

/// `~user/rest` as the path it names (`/root/rest`, `/home/user/rest`).
fn user_home(path: &str) -> Option<String> {
    let rest = path.strip_prefix('~')?;
    let (user, tail) = rest.split_once('/').map_or((rest, ""), |(u, t)| (u, t));
    if user.is_empty()
        || !user
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
    {
        return None;
    }
    let home = if user == "root" {
        "/root".to_string()
    } else {
        format!("/home/{user}")
    };
    Some(if tail.is_empty() {
        home
    } else {
        format!("{home}/{tail}")
    })
}

/// Classify `path`. `dynamic` is true when part of it is only known at run time.
pub(crate) fn classify(path: &str, dynamic: bool) -> PathClass {
    if let Some(expanded) = user_home(path) {
        return classify(&expanded, dynamic);
    }
    let (home, absolute, parts) = components(path);
    if !absolute {
        return classify_relative(path);
    }
    if home {
        return classify_home(&parts);
    }
    let first = parts.first().copied();
    let Some(first) = first else {
        return PathClass::Root;
    };
    if parts.len() == 1 && first == "*" {
        return PathClass::Root;
    }
    if parts.len() == 1 && (has_glob(first) || SYSTEM_DIRS.contains(&first)) {
        return PathClass::SystemDir;
    }
    if parts.len() == 2 && parts[1] == "*" && SYSTEM_DIRS.contains(&first) {
        return PathClass::SystemDir;
    }
    if first == "usr" && parts.len() <= 3 {
        let second = parts[1];
        if (USR_DIRS.contains(&second) || has_glob(second)) && (parts.len() == 2 || parts[2] == "*")
        {
            return PathClass::SystemDir;
        }
    }
    if (first == "home" || first == "Users")
        && (parts.len() == 2 || (parts.len() == 3 && parts[2] == "*"))
    {
        return PathClass::Home;
    }
    if first == "dev" {
        return if is_raw_device(path, dynamic) {
            PathClass::RawDevice
        } else {
            PathClass::Other
        };
    }
    if parts.len() == 2
        && parts[0] == "proc"
        && (parts[1] == "sysrq-trigger"
            || (has_glob(parts[1]) && super::glob::matches(parts[1], "sysrq-trigger")))
    {
        return PathClass::Sysrq;
    }
    // Home directories of any user.
    if first == "root" {
        return match classify_home(&parts[1..]) {
            PathClass::Home | PathClass::Other => PathClass::SystemFile,
            other => other,
        };
    }
    if (first == "home" || first == "Users") && parts.len() > 2 {
        return match classify_home(&parts[2..]) {
            PathClass::Home => PathClass::Home,
            other => other,
        };
    }
    if SYSTEM_FILE_ROOTS.contains(&first)
        || (first == "private" && parts.get(1).is_some_and(|p| ["etc", "var"].contains(p)))
        || (first == "proc" && parts.get(1) == Some(&"sys"))
        || (first == "var"
            && parts
                .get(1)
                .is_some_and(|p| ["spool", "db", "lib"].contains(p)))
    {
        return PathClass::SystemFile;
    }
    if first == "var" && parts.get(1) == Some(&"log") {
        return PathClass::Log;
    }
    classify_relative(path)
}

/// Paths under a home directory (`parts` relative to it).
/// Shell and tool histories in a home: wiping them covers tracks like wiping logs.
const HISTORY_FILES: &[&str] = &[
    ".bash_history",
    ".zsh_history",
    ".history",
    ".sh_history",
    ".python_history",
    ".mysql_history",
    ".psql_history",
    ".node_repl_history",
    ".lesshst",
    ".viminfo",
    ".zhistory",
];

fn classify_home(parts: &[&str]) -> PathClass {
    match parts {
        [] | ["*"] => PathClass::Home,
        [name]
            if HISTORY_FILES.contains(name)
                || (has_glob(name)
                    && HISTORY_FILES.iter().any(|h| super::glob::matches(name, h))) =>
        {
            PathClass::Log
        }
        [".local", "share", "fish", "fish_history"] => PathClass::Log,
        [".ssh", ..] | [".gnupg", ..] => PathClass::Sensitive,
        [store, ..] if CREDENTIAL_DIRS.contains(store) => PathClass::Sensitive,
        [".config", store, ..] if CONFIG_CREDENTIAL_DIRS.contains(store) => PathClass::Sensitive,
        [name] if RC_FILES.contains(name) || CREDENTIAL_FILES.contains(name) => {
            PathClass::Sensitive
        }
        [".aws", "credentials" | "config"]
        | [".docker", "config.json"]
        | [".kube", "config"]
        | [".cargo", "credentials" | "credentials.toml"]
        | [".config", "fish", "config.fish"]
        | [".config", "gh", "hosts.yml"] => PathClass::Sensitive,
        [".config", "toolhost", ..] | [".hermes", "config.yaml" | ".env"] => PathClass::AgentConfig,
        _ => classify_relative(parts.last().copied().unwrap_or_default()),
    }
}

fn classify_relative(path: &str) -> PathClass {
    let trimmed = path.trim_end_matches('/');
    let base = trimmed.rsplit('/').next().unwrap_or(trimmed);
    if path.starts_with("$TOOLHOST_HOME")
        || path.starts_with("${TOOLHOST_HOME}")
        || path.starts_with("$HERMES_HOME")
        || path.starts_with("${HERMES_HOME}")
        || trimmed.ends_with("toolhost/config.toml")
    {
        return PathClass::AgentConfig;
    }
    if base == ".env"
        || (base.starts_with(".env.")
            && !matches!(
                &base[5..],
                "example" | "sample" | "template" | "dist" | "defaults"
            ))
    {
        return PathClass::ProjectEnv;
    }
    PathClass::Other
}

impl PathClass {
    /// The more severe of two classes (declaration order is severity order).
    pub(crate) fn worse(self, other: PathClass) -> PathClass {
        if (other as u8) < (self as u8) {
            other
        } else {
            self
        }
    }
}

/// For a path that starts visibly rooted (`/`, `~`, `$HOME`), the path with every unknown
/// expansion (`$X`, `${X...}`, `$(...)`) taken as empty — what bash deletes when the
/// variable is unset. `None` when the path does not start rooted.
pub(crate) fn unknowns_empty(path: &str) -> Option<String> {
    let rooted = path.starts_with('/')
        || path.starts_with('~')
        || path.starts_with("$HOME")
        || path.starts_with("${HOME}");
    if !rooted {
        return None;
    }
    let (head, rest) = if let Some(r) = path.strip_prefix("${HOME}") {
        ("$HOME", r)
    } else if let Some(r) = path.strip_prefix("$HOME") {
        ("$HOME", r)
    } else {
        ("", path)
    };
    let mut out = String::from(head);
    let bytes = rest.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'$' && i + 1 < bytes.len() {
            let open = bytes[i + 1];
            if open == b'{' || open == b'(' {
                let close = if open == b'{' { b'}' } else { b')' };
                let mut depth = 0usize;
                let mut j = i + 1;
                while j < bytes.len() {
                    if bytes[j] == open {
                        depth += 1;
                    } else if bytes[j] == close {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    j += 1;
                }
                i = j + 1;
                continue;
            }
            let mut j = i + 1;
            while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_') {
                j += 1;
            }
            if j == i + 1 && j < bytes.len() {
                j += 1; // `$1`, `$@`, `$*`
            }
            i = j;
            continue;
        }
        let next = rest[i..].find('$').map_or(rest.len(), |n| i + n.max(1));
        out.push_str(&rest[i..next]);
        i = next;
    }
    Some(out)
}

/// True for files whose content is a secret (private keys, credential stores).
/// The kernel's power-state switches (`/sys/power/state`, `/sys/power/disk`): writing one
/// suspends or hibernates the machine.
pub(crate) fn is_power_control(path: &str) -> bool {
    let (_, _, parts) = components(path);
    parts.len() == 3 && parts[0] == "sys" && parts[1] == "power" && parts[2] != "wakeup_count"
}

/// A cheap first test (this runs on every argument of every command): every credential
/// path has one of these dot-names in it or lies under `etc/` (`shadow`, `sudoers`,
/// `ssl/private`).
pub(crate) fn may_name_secret(path: &str) -> bool {
    const DOT_NAMES: &[&str] = &[
        ".ssh",
        ".aws",
        ".kube",
        ".docker",
        ".azure",
        ".gnupg",
        ".password-store",
        ".vault-token",
        ".config",
        ".netrc",
        ".pgpass",
        ".git-credentials",
        ".pypirc",
        ".local",
        ".mozilla",
    ];
    path.contains("etc/")
        || path
            .match_indices('.')
            .any(|(i, _)| DOT_NAMES.iter().any(|n| path[i..].starts_with(n)))
}

pub(crate) fn is_secret_file(path: &str) -> bool {
    if !may_name_secret(path) {
        return false;
    }
    if let Some(expanded) = user_home(path) {
        return is_secret_file(&expanded);
    }
    let (_, _, parts) = components(path);
    let n = parts.len();
    if n == 0 {
        return false;
    }
    let base = parts[n - 1];
    let parent = if n >= 2 { parts[n - 2] } else { "" };
    let home_store = |i: usize| {
        parts
            .get(i)
            .is_some_and(|p| CREDENTIAL_DIRS.contains(p) && *p != ".ssh")
            || (parts.get(i) == Some(&".config")
                && parts
                    .get(i + 1)
                    .is_some_and(|p| CONFIG_CREDENTIAL_DIRS.contains(p)))
    };
    // `~/.aws`, `~/.kube/config`, `/home/u/.config/gh/hosts.yml`, `/root/.docker`...
    let store_at = match parts.first() {
        Some(&"home") | Some(&"Users") => 2,
        Some(&"root") => 1,
        _ if path.starts_with('~') || path.starts_with("$HOME") || path.starts_with("${HOME}") => 0,
        _ => usize::MAX,
    };
    if store_at != usize::MAX && home_store(store_at) {
        return true;
    }
    // The SSH folder itself (an archive of it), or a private key in it.
    if store_at != usize::MAX && n == store_at + 1 && base == ".ssh" {
        return true;
    }
    (parent == ".ssh" && base.starts_with("id_") && !base.ends_with(".pub"))
        || (parent == ".aws" && base == "credentials")
        || (parent == ".docker" && base == "config.json")
        || (parent == ".kube" && base == "config")
        || (parent == ".gnupg")
        || (parent == "etc" && n == 2 && matches!(base, "shadow" | "gshadow" | "sudoers"))
        || matches!(
            base,
            ".netrc" | ".pgpass" | ".git-credentials" | ".vault-token" | ".pypirc"
        )
        || parent == "keyrings"
        || matches!(base, "Login Data" | "logins.json" | "key4.db" | "key3.db")
        || (parent == ".ssh"
            && has_glob(base)
            && ["id_rsa", "id_ed25519", "id_ecdsa"]
                .iter()
                .any(|k| super::glob::matches(base, k)))
        || (parent == "private" && n >= 3 && parts[n - 3] == "ssl")
}

#[cfg(test)]
mod tests {
    use super::PathClass::*;
    use super::*;

    #[test]
    fn classifies() {
        let cases = [
            ("/", Root),
            ("//", Root),
            ("/.", Root),
            ("/..", Root),
            ("/./..", Root),
            ("/*", Root),
            ("/etc/..", Root),
            ("/etc", SystemDir),
            ("/etc/", SystemDir),
            ("/etc/*", SystemDir),
            ("/usr/./lib/", SystemDir),
            ("/usr/bin", SystemDir),
            ("/e*", SystemDir),
            ("/home", SystemDir),
            ("/etc/nginx", SystemFile),
            ("/etc/hosts", SystemFile),
            ("/usr/local/bin/tool", SystemFile),
            ("~", Home),
            ("~/", Home),
            ("~/*", Home),
            ("$HOME", Home),
            ("${HOME}/", Home),
            ("/home/alice", Home),
            ("/Users/bob/", Home),
            ("/home/alice/project", Other),
            ("~/project/build", Other),
            ("~/.ssh/authorized_keys", Sensitive),
            ("$HOME/.bashrc", Sensitive),
            ("/root/.bashrc", Sensitive),
            ("/home/alice/.zshrc", Sensitive),
            ("~/.aws/credentials", Sensitive),
            ("~/.config/toolhost/config.toml", AgentConfig),
            ("~/.hermes/config.yaml", AgentConfig),
            ("$TOOLHOST_HOME/config.toml", AgentConfig),
            (".env", ProjectEnv),
            ("app/.env.local", ProjectEnv),
            (".env.example", Other),
            ("/dev/sda", RawDevice),
            ("/dev/sdb1", RawDevice),
            ("/dev/nvme0n1p2", RawDevice),
            ("/dev/mmcblk0", RawDevice),
            ("/dev/vda", RawDevice),
            ("/dev/xvdf", RawDevice),
            ("/dev/disk/by-id/ata-X", RawDevice),
            ("/dev/null", Other),
            ("/dev/stdout", Other),
            ("/dev/fd/3", Other),
            ("/proc/sysrq-trigger", Sysrq),
            ("/tmp/x", Other),
            ("/var/log/app.log", Log),
            ("build", Other),
            ("node_modules", Other),
        ];
        for (path, want) in cases {
            assert_eq!(classify(path, false), want, "{path}");
        }
        assert_eq!(classify("/dev/$DISK", true), RawDevice);
    }

    #[test]
    fn secret_files() {
        for p in [
            "~/.ssh/id_rsa",
            "/root/.ssh/id_ed25519",
            "~/.aws/credentials",
            "/etc/shadow",
            "~/.netrc",
        ] {
            assert!(is_secret_file(p), "{p}");
        }
        for p in [
            "~/.ssh/id_rsa.pub",
            "~/.ssh/known_hosts",
            "README.md",
            "/etc/hosts",
        ] {
            assert!(!is_secret_file(p), "{p}");
        }
    }
}
