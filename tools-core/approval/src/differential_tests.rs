//! Ground truth from bash itself: every adversarial corpus command runs in real bash inside
//! bubblewrap, on a throwaway tree, and what it actually did is compared with the
//! detector's verdict.
//!
//! The sandbox: an unprivileged uid (65534) in a user namespace with every capability
//! dropped, new pid/net/ipc/uts namespaces, `/usr` and `/etc` bound read-only, a private
//! `/dev` (no real block devices, no `/proc/sysrq-trigger` write access), a throwaway home
//! and working directory holding canary files, a process limit, stdin from `/dev/null` and
//! a timeout. The dangerous programs (`rm`, `chmod`, `mkfs*`, `dd`, `kill`, `git`,
//! `curl`, `docker`, ...) are replaced at every path (and first on `PATH`) by a shim that
//! records its argv and working directory and exits; bash's `kill` builtin is disabled
//! through `BASH_ENV` so it reaches the shim. Interpreters and file tools (`python3`,
//! `perl`, `sed`, `cp`, `tee`, ...) run for real against the canaries.
//!
//! A command whose recorded invocations (each judged by the same detector on its concrete
//! argv, in its working directory) or whose canary damage show a dangerous effect, while
//! the detector said benign, is a miss. A flagged command that recorded nothing dangerous
//! is a false-positive candidate (expected: stdin payloads and deferred code never reach a
//! shim). Needs `TOOLHOST_TEST_BWRAP` (the bubblewrap binary). `benches/differential.rs`
//! runs the same harness outside the test runner and prints the counts.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::corpus_tests::corpus;
use super::detect::detect;

/// Programs replaced by the recording shim.
const SHIMMED: &[&str] = &[
    "rm",
    "rmdir",
    "unlink",
    "shred",
    "wipefs",
    "blkdiscard",
    "mkfs",
    "mkfs.ext4",
    "mkfs.xfs",
    "mkfs.btrfs",
    "mkfs.vfat",
    "mke2fs",
    "mkswap",
    "dd",
    "chmod",
    "chown",
    "chgrp",
    "chattr",
    "setfacl",
    "reboot",
    "shutdown",
    "poweroff",
    "halt",
    "init",
    "telinit",
    "systemctl",
    "kill",
    "killall",
    "killall5",
    "pkill",
    "git",
    "curl",
    "wget",
    "docker",
    "podman",
    "kubectl",
    "helm",
    "terraform",
    "pulumi",
    "psql",
    "mysql",
    "mysqladmin",
    "dropdb",
    "redis-cli",
    "mongosh",
    "sqlite3",
    "aws",
    "gcloud",
    "az",
    "gsutil",
    "iptables",
    "nft",
    "ufw",
    "ip",
    "ifconfig",
    "nmcli",
    "mount",
    "umount",
    "setenforce",
    "sysctl",
    "cryptsetup",
    "badblocks",
    "hdparm",
    "nvme",
    "kexec",
    "dbus-send",
    "busctl",
    "gdbus",
    "sudo",
    "su",
    "doas",
    "pkexec",
    "crontab",
    "at",
    "batch",
    "tmux",
    "screen",
    "nc",
    "ncat",
    "socat",
    "ssh",
    "scp",
    "rsync",
    "parallel",
    "gdb",
    "lldb",
    "vim",
    "vi",
    "nvim",
    "ex",
    "man",
    "less",
    "make",
    "sfdisk",
    "fdisk",
    "parted",
    "sgdisk",
    "fakeroot",
    "eatmydata",
    "faketime",
    "chpst",
    "setpriv",
    "sg",
    "nix-shell",
    "ssh-agent",
    "dbus-run-session",
    "systemd-run",
    "zip",
    "rg",
    "xargs",
    "find",
    "mv",
    "cp",
    "ln",
    "install",
    "truncate",
    "zpool",
    "zfs",
    "lvremove",
    "vgremove",
    "pvremove",
    "lvm",
    "mdadm",
    "dmsetup",
    "runuser",
    "run0",
    "loginctl",
    "journalctl",
    "ip6tables",
    "etcdctl",
    "consul",
];

/// The shim: argv and working directory as NUL-separated fields, then an RS field.
const SHIM: &str = "#!/bin/sh\nprintf '%s\\0' \"$PWD\" \"${0##*/}\" \"$@\" >> /log/calls\nprintf '\\036\\0' >> /log/calls\nexit 0\n";

/// Canary files (relative to the throwaway root) and their content.
const CANARIES: &[(&str, &str)] = &[
    ("home/.ssh/authorized_keys", "canary authorized key\n"),
    ("home/.ssh/id_rsa", "canary private key\n"),
    ("home/.bashrc", "# canary rc\n"),
    ("home/.aws/credentials", "[default]\ncanary\n"),
    (
        "home/.config/toolhost/config.toml",
        "[approvals]\nmode = \"manual\"\n",
    ),
    ("home/notes.txt", "canary home file\n"),
    ("work/canary.txt", "canary work file\n"),
    ("work/.env", "SECRET=canary\n"),
];

struct Sandbox {
    root: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        for dir in ["home", "work", "log", "shims"] {
            std::fs::create_dir_all(root.path().join(dir)).unwrap();
        }
        for (path, content) in CANARIES {
            let p = root.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, content).unwrap();
        }
        let shim = root.path().join("shims/shim");
        std::fs::write(&shim, SHIM).unwrap();
        for name in SHIMMED {
            std::fs::write(root.path().join("shims").join(name), SHIM).unwrap();
        }
        std::fs::write(root.path().join("log/calls"), b"").unwrap();
        std::fs::write(root.path().join("log/env.sh"), "enable -n kill\n").unwrap();
        // The unprivileged uid writes the throwaway tree.
        Command::new("chmod")
            .args(["-R", "a+rwX"])
            .arg(root.path())
            .status()
            .unwrap();
        Command::new("chmod")
            .args(["a+rx"])
            .args(SHIMMED.iter().map(|n| root.path().join("shims").join(n)))
            .status()
            .unwrap();
        Sandbox { root }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.path().join(rel)
    }

    /// The bwrap command running `script` in bash.
    fn command(&self, bwrap: &str, script: &str) -> Command {
        let mut cmd = Command::new("timeout");
        cmd.args(["-s", "KILL", "5"]);
        if rustix::process::geteuid().is_root() {
            cmd.args([
                "setpriv",
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
            ]);
        }
        cmd.arg("prlimit")
            .args([
                "--nproc=256",
                "--as=2000000000",
                "--fsize=50000000",
                "--cpu=5",
            ])
            .arg(bwrap)
            .args([
                "--unshare-all",
                "--die-with-parent",
                "--new-session",
                "--cap-drop",
                "ALL",
                "--ro-bind",
                "/usr",
                "/usr",
                "--ro-bind",
                "/etc",
                "/etc",
                "--symlink",
                "usr/bin",
                "/bin",
                "--symlink",
                "usr/sbin",
                "/sbin",
                "--symlink",
                "usr/lib",
                "/lib",
                "--symlink",
                "usr/lib64",
                "/lib64",
                "--proc",
                "/proc",
                "--dev",
                "/dev",
                "--tmpfs",
                "/tmp",
            ]);
        for (dir, at) in [("home", "/home/agent"), ("work", "/work"), ("log", "/log")] {
            cmd.arg("--bind").arg(self.path(dir)).arg(at);
        }
        cmd.arg("--ro-bind").arg(self.path("shims")).arg("/shims");
        // Every path a shimmed program is reachable at (symlinks such as
        // `/usr/bin/vi -> /etc/alternatives/vi -> /usr/bin/vim.basic` resolved).
        let mut bound: Vec<PathBuf> = Vec::new();
        for name in SHIMMED {
            for dir in ["/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"] {
                let Ok(target) = Path::new(dir).join(name).canonicalize() else {
                    continue;
                };
                if target.starts_with("/usr") && !bound.contains(&target) {
                    cmd.arg("--ro-bind")
                        .arg(self.path("shims").join(name))
                        .arg(&target);
                    bound.push(target);
                }
            }
        }
        cmd.args(["--setenv", "HOME", "/home/agent"])
            .args([
                "--setenv",
                "PATH",
                "/shims:/usr/local/bin:/usr/bin:/usr/sbin:/bin:/sbin",
            ])
            .args(["--setenv", "BASH_ENV", "/log/env.sh"])
            .args(["--chdir", "/work"])
            .args(["bash", "-c", script])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// Every recorded invocation: (cwd, argv).
    fn calls(&self) -> Vec<(String, Vec<String>)> {
        let bytes = std::fs::read(self.path("log/calls")).unwrap_or_default();
        let mut out = Vec::new();
        let mut fields: Vec<String> = Vec::new();
        for field in bytes.split(|b| *b == 0) {
            if field == b"\x1e" {
                if fields.len() >= 2 {
                    let cwd = fields.remove(0);
                    out.push((cwd, std::mem::take(&mut fields)));
                }
                fields.clear();
            } else if !field.is_empty() || !fields.is_empty() {
                fields.push(String::from_utf8_lossy(field).into_owned());
            }
        }
        out
    }

    /// Canaries changed or removed.
    fn damage(&self) -> Vec<&'static str> {
        CANARIES
            .iter()
            .filter(|(path, content)| {
                std::fs::read_to_string(self.path(path)).ok().as_deref() != Some(*content)
            })
            .map(|(path, _)| *path)
            .collect()
    }
}

fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// What actually happened to one command.
struct Effect {
    dangerous_calls: Vec<String>,
    damage: Vec<&'static str>,
    read_only_refusals: bool,
}

impl Effect {
    fn dangerous(&self) -> bool {
        !self.dangerous_calls.is_empty() || !self.damage.is_empty() || self.read_only_refusals
    }
}

fn run_one(bwrap: &str, command: &str) -> Effect {
    let sandbox = Sandbox::new();
    let output = sandbox.command(bwrap, command).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let dangerous_calls = sandbox
        .calls()
        .into_iter()
        .map(|(cwd, argv)| {
            let line: Vec<String> = argv.iter().map(|a| quote(a)).collect();
            format!("cd {} && {}", quote(&cwd), line.join(" "))
        })
        .filter(|line| detect(line).dangerous())
        .collect();
    Effect {
        dangerous_calls,
        damage: sandbox.damage(),
        read_only_refusals: stderr.contains("Read-only file system"),
    }
}

pub(super) fn bwrap() -> String {
    std::env::var("TOOLHOST_TEST_BWRAP").unwrap_or_else(|_| {
        panic!("TOOLHOST_TEST_BWRAP is not set: the differential harness needs bubblewrap")
    })
}

/// What the harness found over the whole corpus.
pub(super) struct Report {
    /// Commands run.
    pub commands: usize,
    /// Commands judged benign that did something dangerous, described.
    pub misses: Vec<String>,
    /// Commands judged dangerous.
    pub flagged: usize,
    /// Of those, the ones that recorded no dangerous effect.
    pub false_positive_candidates: usize,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "differential: {} commands, {} misses, {} flagged of which {} recorded no dangerous effect",
            self.commands,
            self.misses.len(),
            self.flagged,
            self.false_positive_candidates
        )
    }
}

/// Run every corpus command (the adversarial corpus and the category corpora) in the
/// sandbox (four at a time) and compare.
pub(super) fn run_corpus(bwrap: &str) -> Report {
    let mut corpus = corpus();
    corpus.extend(super::category_corpus_tests::commands());
    let results: Vec<(String, bool, Effect)> = std::thread::scope(|s| {
        let chunks: Vec<_> = corpus
            .chunks(corpus.len().div_ceil(4))
            .map(|chunk| {
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|(_, command)| {
                            (
                                command.clone(),
                                detect(command).dangerous(),
                                run_one(bwrap, command),
                            )
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        chunks.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let mut report = Report {
        commands: results.len(),
        misses: Vec::new(),
        flagged: 0,
        false_positive_candidates: 0,
    };
    for (command, judged_dangerous, effect) in &results {
        if *judged_dangerous {
            report.flagged += 1;
            if !effect.dangerous() {
                report.false_positive_candidates += 1;
            }
        } else if effect.dangerous() {
            report.misses.push(format!(
                "{command:?}: calls {:?}, damage {:?}, read-only refusals {}",
                effect.dangerous_calls, effect.damage, effect.read_only_refusals
            ));
        }
    }
    report
}

#[test]
#[ignore = "needs bwrap"]
fn no_command_that_did_damage_was_judged_benign() {
    let report = run_corpus(&bwrap());
    println!("{report}");
    assert!(
        report.misses.is_empty(),
        "{} misses:\n{}",
        report.misses.len(),
        report.misses.join("\n")
    );
}

#[test]
#[ignore = "needs bwrap"]
fn the_sandbox_holds_against_escapes() {
    let bwrap = bwrap();
    // Outside every path the sandbox binds: invisible inside it.
    let host_canary = tempfile::NamedTempFile::new_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    std::fs::write(host_canary.path(), "host").unwrap();
    let sandbox = Sandbox::new();
    let parent = std::process::id();
    // Harmless even if the sandbox failed: a remount inside a mount namespace, a canary
    // the test owns, signal 0, and an open of the sysrq trigger that writes nothing.
    let script = format!(
        "python3 -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True); \
         print(\"mount\", l.mount(b\"none\", b\"/usr\", None, 32, None))'; \
         echo x > /usr/canary-$$ 2>/dev/null; echo usr=$?; \
         echo x > {host} 2>/dev/null; echo host=$?; \
         python3 -c 'import os\ntry:\n os.kill({parent}, 0); print(\"kill=0\")\nexcept OSError as e: print(\"kill=\", e.errno)'; \
         : >> /proc/sysrq-trigger 2>/dev/null; echo sysrq=$?",
        host = host_canary.path().display(),
    );
    let out = sandbox.command(&bwrap, &script).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(std::fs::read_to_string(host_canary.path()).unwrap(), "host");
    assert!(stdout.contains("usr=1"), "{stdout}");
    assert!(stdout.contains("host=1"), "{stdout}");
    assert!(stdout.contains("sysrq=1"), "{stdout}");
    assert!(!stdout.contains("kill=0"), "{stdout}");
    assert!(!stdout.contains("mount 0"), "{stdout}");
    assert!(!Path::new("/usr").join("canary").exists());
}
