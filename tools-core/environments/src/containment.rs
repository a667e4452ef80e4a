//! Everything a local command starts ends with it. A process group is not enough: a
//! command can leave its group (`setsid`), or leave a daemon behind that outlives the
//! shell (`(sleep 100 &)`, `bash -c "… &"`, `eval "… &"`), and such processes used to
//! survive the call, its timeout and `process kill`.
//!
//! Each contained command gets a [`Scope`]:
//! - **cgroup v2**, where toolhost's own cgroup is writable: the command is moved into a
//!   fresh child cgroup (`<own cgroup>/toolhost-<pid>-<n>`) between fork and exec, so
//!   everything it starts is born inside; ending the scope writes `cgroup.kill` (or
//!   SIGKILLs each member on kernels without it) and removes the cgroup. Processes
//!   cannot leave a cgroup without write access to another one.
//! - **environment mark**, always: the command's environment carries
//!   `TOOLHOST_SCOPE=<id>`, which every descendant inherits through `fork`, `setsid` and
//!   `exec`. Where no cgroup could be made, ending the scope SIGKILLs every process whose
//!   `/proc/<pid>/environ` carries the mark, until none is left.
//! - **subreaper runner**, where there is no cgroup (piped commands): the process
//!   toolhost starts is a child subreaper that runs the command and, when it ends, kills
//!   everything re-parented to it — which catches a process that clears its environment
//!   *and* leaves the process group (`subreaper.rs`).
//!
//! A scope ends when the command is killed (timeout, cancellation, `process kill`) and
//! when its handle is dropped after a normal exit.

use std::ffi::CString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};

/// The environment variable that marks every process of one command.
pub const SCOPE_ENV: &str = "TOOLHOST_SCOPE";

/// How long ending a scope waits for its processes to be gone.
const END_LIMIT: Duration = Duration::from_secs(2);

/// The processes of one command (see the module doc).
#[derive(Debug)]
pub struct Scope {
    id: String,
    cgroup: Option<PathBuf>,
    /// Search the environment mark at the end (always without a cgroup).
    search_mark: bool,
    ended: bool,
}

impl Scope {
    /// A new scope: a cgroup where toolhost's cgroup is writable, and a fresh mark.
    pub fn new() -> Scope {
        let mut scope = Scope::marked_only();
        scope.cgroup = own_cgroup().and_then(|parent| {
            let dir = parent.join(format!("toolhost-{}", scope.id));
            match std::fs::create_dir(&dir) {
                Ok(()) => {
                    scope.search_mark = false;
                    // The process cap of the floor where the kernel exempts the user
                    // from RLIMIT_NPROC (root): needs the pids controller delegated.
                    let cap = super::PROCESS_CAP.to_string();
                    if let Err(err) = std::fs::write(dir.join("pids.max"), cap) {
                        tracing::debug!(%err, "no pids.max for the command's cgroup");
                    }
                    Some(dir)
                }
                Err(err) => {
                    tracing::debug!(%err, dir = %dir.display(), "no per-command cgroup; tracking by environment mark");
                    None
                }
            }
        });
        scope
    }

    /// A scope tracked by the environment mark alone (the fallback; also for tests).
    pub fn marked_only() -> Scope {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        Scope {
            id: format!("{}-{n}-{}", std::process::id(), super::random_hex(4)),
            cgroup: None,
            search_mark: true,
            ended: false,
        }
    }

    /// The mark's value (`TOOLHOST_SCOPE=<this>`).
    pub fn mark(&self) -> &str {
        &self.id
    }

    /// The scope's cgroup directory, when it has one.
    pub fn cgroup(&self) -> Option<&Path> {
        self.cgroup.as_deref()
    }

    /// `<cgroup>/cgroup.procs` as a C string, for the child to write `0` into between
    /// fork and exec (no allocation happens there).
    pub fn procs_file(&self) -> Option<CString> {
        let path = self.cgroup.as_ref()?.join("cgroup.procs");
        CString::new(path.into_os_string().into_encoded_bytes()).ok()
    }

    /// After the spawn: whether the command `pid` really joined the cgroup (the write
    /// between fork and exec may fail, or the command may already be gone); when that
    /// cannot be seen, the environment mark is searched as well at the end.
    pub fn confirm(&mut self, pid: u32) {
        let Some(dir) = &self.cgroup else { return };
        let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let in_procs = Pid::from_raw(i32::try_from(pid).unwrap_or(0))
            .is_some_and(|pid| cgroup_members(dir).contains(&pid));
        let in_proc_file =
            std::fs::read_to_string(format!("/proc/{pid}/cgroup")).is_ok_and(|text| {
                text.lines()
                    .any(|l| l.starts_with("0::") && l.ends_with(name))
            });
        self.search_mark = !(in_procs || in_proc_file);
        if self.search_mark {
            tracing::debug!(cgroup = %dir.display(), "cannot see the command in its cgroup; searching the environment mark too");
        }
    }

    /// The scope's live processes: its cgroup's members, and the processes carrying its
    /// mark when the mark is searched (no cgroup, or the command not seen joining it).
    pub fn members(&self) -> Vec<Pid> {
        let mut pids = self
            .cgroup
            .as_deref()
            .map(cgroup_members)
            .unwrap_or_default();
        if self.search_mark || self.cgroup.is_none() {
            let needle = format!("{SCOPE_ENV}={}", self.id);
            for pid in marked_processes(needle.as_bytes()) {
                if !pids.contains(&pid) {
                    pids.push(pid);
                }
            }
        }
        pids
    }

    /// End every process of the scope except `keep` (a persistent shell and the
    /// processes it runs in): SIGTERM and up to `grace` for them to go when a grace is
    /// given, then SIGKILL until none is left (up to 2 s). True when only `keep` is left.
    pub fn end_all_but(&self, keep: &[Pid], grace: Option<Duration>) -> bool {
        let others = || -> Vec<Pid> {
            let mut members = self.members();
            members.retain(|pid| !keep.contains(pid));
            members
        };
        let mut left = others();
        if left.is_empty() {
            return true;
        }
        if let Some(grace) = grace {
            for pid in &left {
                let _ = rustix::process::kill_process(*pid, Signal::TERM);
            }
            let until = Instant::now() + grace;
            while !left.is_empty() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(5));
                left = others();
            }
        }
        let deadline = Instant::now() + END_LIMIT;
        while !left.is_empty() {
            if Instant::now() >= deadline {
                tracing::warn!(
                    left = left.len(),
                    "processes of a finished command did not die in time"
                );
                return false;
            }
            for pid in &left {
                let _ = rustix::process::kill_process(*pid, Signal::KILL);
            }
            std::thread::sleep(Duration::from_micros(200));
            left = others();
        }
        true
    }

    /// Kill everything still running in the scope and release it. Idempotent.
    pub fn end(&mut self) {
        if self.ended {
            return;
        }
        self.ended = true;
        if let Some(dir) = &self.cgroup {
            end_cgroup(dir);
        }
        if self.search_mark || self.cgroup.is_none() {
            end_marked(&self.id);
        }
    }
}

impl Default for Scope {
    fn default() -> Self {
        Scope::new()
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        self.end();
    }
}

/// In the child, between fork and exec: join the cgroup whose `cgroup.procs` is
/// `procs`. Only async-signal-safe calls (open, write, close); a failure leaves the
/// command outside the cgroup, where the environment mark still finds it.
pub fn join_cgroup_in_child(procs: &std::ffi::CStr) {
    use rustix::fs::{Mode, OFlags};
    if let Ok(fd) = rustix::fs::open(procs, OFlags::WRONLY | OFlags::CLOEXEC, Mode::empty()) {
        let _ = rustix::io::write(&fd, b"0");
    }
}

/// The directory of toolhost's own cgroup v2, when it is writable.
fn own_cgroup() -> Option<&'static Path> {
    static OWN: OnceLock<Option<PathBuf>> = OnceLock::new();
    OWN.get_or_init(|| {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
        let membership = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let dir = cgroup_dir(&mountinfo, &membership)?;
        let writable = rustix::fs::access(&dir, rustix::fs::Access::WRITE_OK).is_ok()
            && dir.join("cgroup.procs").exists();
        writable.then_some(dir)
    })
    .as_deref()
}

/// `<cgroup2 mount>/<our path>` from `/proc/self/mountinfo` and `/proc/self/cgroup`.
fn cgroup_dir(mountinfo: &str, membership: &str) -> Option<PathBuf> {
    let own = membership
        .lines()
        .find_map(|line| line.strip_prefix("0::"))?
        .trim();
    // mountinfo: id parent major:minor root mount-point options ... - fstype source ...
    let mount = mountinfo.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        if right.split_whitespace().next()? != "cgroup2" {
            return None;
        }
        let mut fields = left.split_whitespace();
        let root = fields.nth(3)?;
        let point = fields.next()?;
        Some((root.to_string(), point.to_string()))
    })?;
    let (root, point) = mount;
    // A cgroup namespace or a bind mount shows a sub-tree: strip its root.
    let relative = own.strip_prefix(root.as_str()).unwrap_or(own);
    Some(Path::new(&point).join(relative.trim_start_matches('/')))
}

/// Pids listed in `<dir>/cgroup.procs`.
fn cgroup_members(dir: &Path) -> Vec<Pid> {
    std::fs::read_to_string(dir.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse::<i32>().ok())
        .filter_map(Pid::from_raw)
        .collect()
}

fn end_cgroup(dir: &Path) {
    let deadline = Instant::now() + END_LIMIT;
    let has_kill = std::fs::write(dir.join("cgroup.kill"), "1").is_ok();
    loop {
        let members = cgroup_members(dir);
        if members.is_empty() {
            break;
        }
        if !has_kill {
            for pid in members {
                let _ = rustix::process::kill_process(pid, Signal::KILL);
            }
        }
        if Instant::now() >= deadline {
            tracing::warn!(cgroup = %dir.display(), "processes of a finished command did not die in time");
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    // Empty now; the kernel may still be tearing the last member down.
    for _ in 0..50 {
        match std::fs::remove_dir(dir) {
            Ok(()) => return,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return,
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
    tracing::debug!(cgroup = %dir.display(), "could not remove a command's cgroup");
}

/// SIGKILL every process carrying `TOOLHOST_SCOPE=<id>` until none is left.
fn end_marked(id: &str) {
    let needle = format!("{SCOPE_ENV}={id}");
    let deadline = Instant::now() + END_LIMIT;
    loop {
        let marked = marked_processes(needle.as_bytes());
        if marked.is_empty() || Instant::now() >= deadline {
            return;
        }
        for pid in marked {
            let _ = rustix::process::kill_process(pid, Signal::KILL);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Live (non-zombie) processes whose environment holds the entry `needle`, excluding
/// this process.
fn marked_processes(needle: &[u8]) -> Vec<Pid> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let own = std::process::id();
    let mut environ = Vec::new();
    dir.flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            if pid == own {
                return None;
            }
            let stat = super::local_child::ProcStat::read(&entry.path())?;
            if matches!(stat.state, 'Z' | 'X') {
                return None;
            }
            environ.clear();
            std::fs::File::open(entry.path().join("environ"))
                .and_then(|mut f| f.read_to_end(&mut environ))
                .ok()?;
            environ
                .split(|b| *b == 0)
                .any(|entry| entry == needle)
                .then(|| Pid::from_raw(i32::try_from(pid).ok()?))
                .flatten()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cgroup_directory_comes_from_mountinfo_and_membership() {
        let cases = [
            (
                "30 25 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw\n",
                "0::/user.slice/app.scope\n",
                Some("/sys/fs/cgroup/user.slice/app.scope"),
            ),
            (
                "41 30 0:35 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n\
                 40 30 0:34 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n",
                "8:pids:/\n0::/\n",
                Some("/sys/fs/cgroup/unified"),
            ),
            // A container whose cgroup namespace root is a sub-tree.
            (
                "50 40 0:26 /docker/abc /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n",
                "0::/docker/abc/inner\n",
                Some("/sys/fs/cgroup/inner"),
            ),
            // cgroup v1 only.
            (
                "40 30 0:34 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n",
                "8:pids:/\n",
                None,
            ),
        ];
        for (mountinfo, membership, want) in cases {
            assert_eq!(
                cgroup_dir(mountinfo, membership),
                want.map(PathBuf::from),
                "{membership}"
            );
        }
    }

    use crate::capture::OutputCapture;
    use crate::exec::{Ending, wait_for};
    use crate::local::LocalEnvironment;
    use crate::local_child::LocalChild;
    use crate::{Environment, RunningCommand, SpawnRequest};

    /// `(needle, prefix)`: a `sleep N` no other test uses, so its processes can be found
    /// by name, and the script prefix `export N=…;` — scripts say `sleep $N`, so the
    /// shell running the script never matches the needle itself.
    fn unique_sleep(salt: u32) -> (String, String) {
        let n = 800_000 + (std::process::id().wrapping_mul(7) + salt) % 99_991;
        (format!("sleep {n}"), format!("export N={n}; "))
    }

    /// Live processes whose command line contains `needle`: `pid: command line`.
    fn running(needle: &str) -> Vec<String> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.flatten()
            .filter(|e| {
                super::super::local_child::ProcStat::read(&e.path())
                    .is_some_and(|s| !matches!(s.state, 'Z' | 'X'))
            })
            .filter_map(|e| {
                let raw = std::fs::read(e.path().join("cmdline")).ok()?;
                let line = String::from_utf8_lossy(&raw).replace('\0', " ");
                let pid = e.file_name().to_string_lossy().to_string();
                line.contains(needle).then(|| format!("{pid}: {line}"))
            })
            .collect()
    }

    /// Poll until nothing matching `needle` runs (up to 3 s); what was left (killed
    /// then, so a failing test leaves nothing behind).
    fn left_running(needle: &str) -> Vec<String> {
        for _ in 0..150 {
            if running(needle).is_empty() {
                return Vec::new();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let left = running(needle);
        for line in &left {
            let pid = line.split(':').next().and_then(|p| p.parse::<i32>().ok());
            if let Some(pid) = pid.and_then(Pid::from_raw) {
                let _ = rustix::process::kill_process(pid, Signal::KILL);
            }
        }
        left
    }

    fn spawn_local(script: String) -> Box<dyn RunningCommand> {
        LocalEnvironment::new("/tmp", Vec::new())
            .spawn(SpawnRequest {
                script,
                ..SpawnRequest::default()
            })
            .unwrap()
    }

    /// Shell code that waits until `n` processes `sleep $N` run: a command without a
    /// cgroup must not exit before its daemons are seen, or the runner ends them before
    /// the test can see them start.
    fn await_daemons(n: usize) -> String {
        format!("until [ \"$(pgrep -fxc \"sleep $N\")\" -ge {n} ]; do sleep 0.02; done; ")
    }

    /// Wait until `needle` runs, so a test never passes because it never started.
    fn started(needle: &str) {
        for _ in 0..1000 {
            if !running(needle).is_empty() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("{needle} never started");
    }

    #[test]
    fn daemons_end_with_the_command_that_started_them() {
        let forms = [
            "(sleep $N &)",
            "bash -c \"sleep $N &\"",
            "eval \"sleep $N &\"",
            "setsid sleep $N &",
            "(setsid sleep $N > /dev/null 2>&1 &)",
            "bash -c \"setsid bash -c 'sleep $N &' &\"",
        ];
        for (i, form) in forms.iter().enumerate() {
            let (needle, prefix) = unique_sleep(i as u32);
            // The script waits until the daemon runs as `sleep $N`: a subshell that
            // forked but has not yet exec'd `sleep` is not seen by name, and the check
            // below runs only after the command exited.
            let script = format!("{prefix}{form}\n{}echo started", await_daemons(1));
            let mut child = spawn_local(script);
            let mut capture = OutputCapture::unbounded();
            let ending = wait_for(child.as_mut(), &mut capture, Duration::from_secs(20), None);
            let output = String::from_utf8_lossy(&capture.into_bytes()).to_string();
            assert_eq!(ending, Ending::Exited(0), "{form}: {output}");
            assert!(
                !running(&needle).is_empty(),
                "{form} started nothing: {output}"
            );
            drop(child);
            assert_eq!(left_running(&needle), Vec::<String>::new(), "{form}");
        }
    }

    #[test]
    fn setsid_does_not_escape_the_timeout() {
        let (needle, prefix) = unique_sleep(20);
        let mut child = spawn_local(format!("{prefix}setsid sleep $N & sleep 1000"));
        started(&needle);
        let mut capture = OutputCapture::unbounded();
        let ending = wait_for(child.as_mut(), &mut capture, Duration::from_secs(1), None);
        assert_eq!(ending, Ending::TimedOut);
        // Ended by the timeout's kill, before the handle is dropped.
        assert_eq!(left_running(&needle), Vec::<String>::new());
    }

    #[test]
    fn setsid_does_not_escape_a_kill() {
        let (needle, prefix) = unique_sleep(21);
        let mut child = spawn_local(format!(
            "{prefix}setsid sleep $N & (setsid sleep $N &); wait"
        ));
        started(&needle);
        child.kill();
        assert_eq!(left_running(&needle), Vec::<String>::new());
    }

    #[test]
    fn without_a_cgroup_the_environment_mark_finds_the_escapees() {
        let (needle, prefix) = unique_sleep(22);
        let spec = LocalEnvironment::new("/tmp", Vec::new()).command(SpawnRequest {
            script: format!(
                "{prefix}(setsid sleep $N &); bash -c \"sleep $N &\"; {}echo started",
                await_daemons(2)
            ),
            ..SpawnRequest::default()
        });
        let mut child = LocalChild::spawn_in(spec, Some(Scope::marked_only())).unwrap();
        // The script prints "started" only once it saw both daemons run (the runner may
        // end them as soon as it exits, before this thread could look).
        let mut capture = OutputCapture::unbounded();
        let ending = wait_for(&mut child, &mut capture, Duration::from_secs(20), None);
        assert_eq!(ending, Ending::Exited(0));
        assert!(String::from_utf8_lossy(&capture.into_bytes()).contains("started"));
        drop(child);
        assert_eq!(left_running(&needle), Vec::<String>::new());
    }

    /// A command without a cgroup, so the subreaper runner is what contains it.
    fn spawn_without_cgroup(script: String) -> LocalChild {
        let spec = LocalEnvironment::new("/tmp", Vec::new()).command(SpawnRequest {
            script,
            ..SpawnRequest::default()
        });
        LocalChild::spawn_in(spec, Some(Scope::marked_only())).unwrap()
    }

    #[test]
    fn without_a_cgroup_a_process_dropping_the_mark_and_the_group_still_ends() {
        let (needle, prefix) = unique_sleep(23);
        let mut child = spawn_without_cgroup(format!(
            "{prefix}setsid env -i sleep $N > /dev/null 2>&1 & (setsid env -i sleep $N > /dev/null 2>&1 &); {}echo started",
            await_daemons(2)
        ));
        // "started" is printed only once both daemons were seen running.
        let mut capture = OutputCapture::unbounded();
        let ending = wait_for(&mut child, &mut capture, Duration::from_secs(20), None);
        assert_eq!(ending, Ending::Exited(0));
        assert!(String::from_utf8_lossy(&capture.into_bytes()).contains("started"));
        // Ended by the runner when the command exited, before the scope's end.
        assert_eq!(left_running(&needle), Vec::<String>::new());
        drop(child);
    }

    #[test]
    fn without_a_cgroup_a_kill_ends_processes_without_the_mark() {
        let (needle, prefix) = unique_sleep(24);
        let mut child = spawn_without_cgroup(format!(
            "{prefix}(setsid env -i sleep $N > /dev/null 2>&1 &); trap '' TERM; while :; do sleep 0.2; done"
        ));
        started(&needle);
        child.kill();
        assert_eq!(left_running(&needle), Vec::<String>::new());
    }

    #[test]
    fn the_runner_passes_the_exit_status_and_the_output_through() {
        let mut child = spawn_without_cgroup("echo out; echo err >&2; exit 3".into());
        let mut capture = OutputCapture::unbounded();
        let ending = wait_for(&mut child, &mut capture, Duration::from_secs(20), None);
        assert_eq!(ending, Ending::Exited(3));
        let output = String::from_utf8_lossy(&capture.into_bytes()).to_string();
        assert!(output.contains("out") && output.contains("err"), "{output}");
    }

    #[test]
    fn a_writable_cgroup_v2_gets_one_cgroup_per_command_and_removes_it() {
        let Some(_) = own_cgroup() else {
            // Covered by the mark test above; nothing cgroup-specific to check here.
            assert!(Scope::new().cgroup().is_none());
            return;
        };
        let scope = Scope::new();
        let dir = scope
            .cgroup()
            .expect("a cgroup under a writable parent")
            .to_path_buf();
        assert!(dir.join("cgroup.procs").exists());
        drop(scope);
        assert!(!dir.exists(), "{} was not removed", dir.display());
    }

    #[test]
    fn marks_are_unique() {
        let a = Scope::marked_only();
        let b = Scope::marked_only();
        assert_ne!(a.mark(), b.mark());
    }
}
