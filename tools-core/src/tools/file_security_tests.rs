//! Regression tests for the file tools' security and data-safety guarantees, across
//! tools: secret files, blocking special files, symlink races and concurrent edits.
//! (README, "File tools: what is guarded", states the policies.)

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use crate::context::ToolContext;
use crate::files::{FileSystem, LocalFileSystem, LocalFileSystemProvider};
use crate::home::Home;
use crate::registry::Registry;
use crate::services::CoreServices;

struct Fixture {
    dir: tempfile::TempDir,
    home: Home,
    registry: Arc<Registry>,
}

fn fixture_with(configure: impl FnOnce(&mut CoreServices, &Path)) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let home = Home::at(dir.path().join("toolhost-home"));
    let mut services = CoreServices::for_tests(home.clone());
    services.files = Arc::new(LocalFileSystemProvider::new(dir.path()));
    configure(&mut services, dir.path());
    let services = Arc::new(services);
    let registry = Registry::new();
    for build in [
        super::read_file::build,
        super::write_file::build,
        super::patch::build,
        super::search_files::build,
    ] {
        registry.register(build(&services).unwrap());
    }
    Fixture {
        dir,
        home,
        registry: Arc::new(registry),
    }
}

fn fixture() -> Fixture {
    fixture_with(|_, _| {})
}

impl Fixture {
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    fn put(&self, name: &str, content: &str) {
        let path = self.path(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    fn call(&self, tool: &str, args: Value) -> Value {
        let r = self
            .registry
            .dispatch_blocking(tool, args, &ToolContext::default());
        serde_json::from_str(&r.text).unwrap()
    }
    /// `call` on another thread; `None` when it did not answer within `limit`.
    fn call_within(&self, tool: &'static str, args: Value, limit: Duration) -> Option<Value> {
        let registry = Arc::clone(&self.registry);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let r = registry.dispatch_blocking(tool, args, &ToolContext::default());
            let _ = tx.send(serde_json::from_str::<Value>(&r.text).unwrap());
        });
        rx.recv_timeout(limit).ok()
    }
}

fn error_of(v: &Value) -> String {
    v["error"].as_str().unwrap_or_default().to_string()
}

// ---- secret files -------------------------------------------------------------------

#[test]
fn secret_file_variants_are_refused_by_read_file() {
    let f = fixture();
    for name in [
        ".env",
        ".env.prod",
        ".env.backup",
        ".env.docker",
        "prod.env",
        ".envrc",
    ] {
        f.put(name, "DB_PASSWORD=hunter2\n");
        let r = f.call("read_file", json!({"path": name}));
        assert!(error_of(&r).contains("Access denied"), "{name}: {r}");
        assert!(!r.to_string().contains("hunter2"), "{name}: {r}");
    }
    f.put(".env.example", "DB_PASSWORD=\n");
    let r = f.call("read_file", json!({"path": ".env.example"}));
    assert!(r["error"].is_null(), "{r}");
}

#[cfg(unix)]
#[test]
fn symlink_to_a_secret_file_is_refused() {
    let f = fixture();
    f.put("app/.env", "API_TOKEN=hunter2\n");
    std::os::unix::fs::symlink(f.path("app/.env"), f.path("notes.txt")).unwrap();
    let r = f.call("read_file", json!({"path": "notes.txt"}));
    assert!(error_of(&r).contains("Access denied"), "{r}");
    let r = f.call(
        "search_files",
        json!({"pattern": "hunter2", "path": "notes.txt"}),
    );
    assert!(!r.to_string().contains("hunter2"), "{r}");
}

#[test]
fn search_files_omits_matches_in_secret_variants() {
    let f = fixture();
    f.put("prod.env", "TOKEN=hunter2\n");
    f.put("cfg/.env.staging2", "TOKEN=hunter2\n");
    f.put("src/main.rs", "// hunter2 mentioned in code\n");
    let r = f.call(
        "search_files",
        json!({"pattern": "hunter2", "path": ".", "output_mode": "files_only"}),
    );
    assert_eq!(r["files"], json!(["src/main.rs"]), "{r}");
    assert!(r["_omitted"].is_string(), "{r}");
}

#[test]
fn patch_refuses_secret_files() {
    let f = fixture();
    f.put(".env.local2", "TOKEN=hunter2\n");
    let r = f.call(
        "patch",
        json!({"path": ".env.local2", "old_string": "TOKEN=hunter", "new_string": "TOKEN=x"}),
    );
    assert_eq!(r["success"], false, "{r}");
    assert!(!r.to_string().contains("hunter2"), "{r}");
    assert_eq!(
        std::fs::read_to_string(f.path(".env.local2")).unwrap(),
        "TOKEN=hunter2\n"
    );
}

#[test]
fn write_file_refuses_to_overwrite_a_secret_file() {
    let f = fixture();
    f.put("deploy/prod.env", "TOKEN=hunter2\n");
    let r = f.call(
        "write_file",
        json!({"path": "deploy/prod.env", "content": "TOKEN=\n"}),
    );
    assert!(error_of(&r).contains("secret"), "{r}");
    assert_eq!(
        std::fs::read_to_string(f.path("deploy/prod.env")).unwrap(),
        "TOKEN=hunter2\n"
    );
}

#[test]
fn secret_patterns_are_configurable() {
    let f = fixture_with(|services, _| {
        services.settings.files.secret_files = vec!["*.secret".into(), "!public.secret".into()];
    });
    f.put("db.secret", "pw\n");
    f.put("public.secret", "hello\n");
    f.put(".env", "A=1\n");
    assert!(error_of(&f.call("read_file", json!({"path": "db.secret"}))).contains("denied"));
    assert!(f.call("read_file", json!({"path": "public.secret"}))["error"].is_null());
    // The configured list replaces the default one.
    assert!(f.call("read_file", json!({"path": ".env"}))["error"].is_null());
}

#[test]
fn spilled_copies_of_tool_output_are_fully_redacted() {
    let f = fixture();
    let results = f.home.results_dir();
    std::fs::create_dir_all(&results).unwrap();
    let spilled = results.join("terminal-abc.txt");
    std::fs::write(&spilled, "$ cat .env\nDB_PASSWORD=hunter2secret\n").unwrap();
    let shown = spilled.display().to_string();
    let r = f.call("read_file", json!({"path": shown}));
    assert!(
        r["content"].as_str().unwrap().contains("DB_PASSWORD="),
        "{r}"
    );
    assert!(!r.to_string().contains("hunter2secret"), "{r}");
    let root = results.display().to_string();
    let r = f.call("search_files", json!({"pattern": "PASSWORD", "path": root}));
    assert_eq!(r["total_count"], 1, "{r}");
    assert!(!r.to_string().contains("hunter2secret"), "{r}");
    // The same line in a project file is source text: only shaped secrets are hidden.
    f.put("settings.py", "DB_PASSWORD=hunter2secret\n");
    let r = f.call("read_file", json!({"path": "settings.py"}));
    assert!(
        r["content"].as_str().unwrap().contains("hunter2secret"),
        "{r}"
    );
}

// ---- blocking special files ----------------------------------------------------------

#[cfg(unix)]
#[test]
fn fifo_is_refused_without_blocking() {
    let f = fixture();
    let fifo = f.path("pipe");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    for tool in ["read_file", "search_files"] {
        let args = match tool {
            "read_file" => json!({"path": "pipe"}),
            _ => json!({"pattern": "x", "path": "pipe"}),
        };
        let r = f
            .call_within(tool, args, Duration::from_secs(20))
            .unwrap_or_else(|| panic!("{tool} blocked on a FIFO"));
        assert!(r["error"].is_string(), "{tool}: {r}");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn proc_kmsg_is_refused_without_blocking() {
    let f = fixture();
    for tool in ["read_file", "search_files"] {
        let args = match tool {
            "read_file" => json!({"path": "/proc/kmsg"}),
            _ => json!({"pattern": "x", "path": "/proc/kmsg"}),
        };
        let r = f
            .call_within(tool, args, Duration::from_secs(20))
            .unwrap_or_else(|| panic!("{tool} blocked on /proc/kmsg"));
        assert!(r["error"].is_string(), "{tool}: {r}");
    }
}

// ---- symlink races ---------------------------------------------------------------------

/// Flip `link` between `a` and `b` (atomic renames of a fresh link) until `stop`.
#[cfg(unix)]
fn flip_link(link: PathBuf, a: PathBuf, b: PathBuf, stop: Arc<AtomicBool>) {
    let tmp = link.with_extension("flip");
    let mut toggle = false;
    while !stop.load(Ordering::Relaxed) {
        let _ = std::fs::remove_file(&tmp);
        let target = if toggle { &a } else { &b };
        if std::os::unix::fs::symlink(target, &tmp).is_ok() {
            let _ = std::fs::rename(&tmp, &link);
        }
        std::thread::sleep(Duration::from_micros(100));
        toggle = !toggle;
    }
}

#[cfg(unix)]
#[test]
fn flipping_a_directory_symlink_never_lets_write_file_into_state() {
    let f = fixture();
    let memories = f.home.state_dir().join("memories");
    std::fs::create_dir_all(&memories).unwrap();
    std::fs::write(memories.join("MEMORY.md"), "original").unwrap();
    let safe = f.path("safe/memories");
    std::fs::create_dir_all(&safe).unwrap();
    let link = f.path("flip");
    std::os::unix::fs::symlink(f.path("safe"), &link).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flipper = {
        let (link, a, b, stop) = (link, f.path("safe"), f.home.state_dir(), Arc::clone(&stop));
        std::thread::spawn(move || flip_link(link, a, b, stop))
    };
    for _ in 0..300 {
        f.call(
            "write_file",
            json!({"path": "flip/memories/MEMORY.md", "content": "pwned"}),
        );
    }
    stop.store(true, Ordering::Relaxed);
    flipper.join().unwrap();
    assert_eq!(
        std::fs::read_to_string(memories.join("MEMORY.md")).unwrap(),
        "original"
    );
}

/// Swap the directory `dir` with a symlink to `elsewhere` and back until `stop`.
#[cfg(unix)]
fn swap_dir_for_link(dir: PathBuf, elsewhere: PathBuf, stop: Arc<AtomicBool>) {
    let parked = dir.with_extension("parked");
    let tmp = dir.with_extension("link");
    while !stop.load(Ordering::Relaxed) {
        let _ = std::fs::remove_file(&tmp);
        if std::os::unix::fs::symlink(&elsewhere, &tmp).is_err()
            || std::fs::rename(&dir, &parked).is_err()
        {
            continue;
        }
        let _ = std::fs::rename(&tmp, &dir);
        std::thread::sleep(Duration::from_micros(100));
        let _ = std::fs::remove_file(&dir);
        let _ = std::fs::rename(&parked, &dir);
        std::thread::sleep(Duration::from_micros(100));
    }
}

#[cfg(unix)]
#[test]
fn a_directory_replaced_by_a_symlink_after_the_check_is_not_followed() {
    let f = fixture();
    let memories = f.home.state_dir().join("memories");
    std::fs::create_dir_all(&memories).unwrap();
    std::fs::write(memories.join("MEMORY.md"), "original").unwrap();
    std::fs::create_dir_all(f.path("work/memories")).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (dir, elsewhere, stop) = (f.path("work"), f.home.state_dir(), Arc::clone(&stop));
        std::thread::spawn(move || swap_dir_for_link(dir, elsewhere, stop))
    };
    for _ in 0..300 {
        f.call(
            "write_file",
            json!({"path": "work/memories/MEMORY.md", "content": "pwned"}),
        );
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    assert_eq!(
        std::fs::read_to_string(memories.join("MEMORY.md")).unwrap(),
        "original"
    );
}

#[cfg(unix)]
#[test]
fn flipping_a_link_between_a_plain_file_and_a_secret_never_leaks_it() {
    let f = fixture();
    f.put("plain.txt", "nothing to see\n");
    f.put(".env", "API_TOKEN=hunter2\n");
    let link = f.path("notes.txt");
    std::os::unix::fs::symlink(f.path("plain.txt"), &link).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flipper = {
        let (a, b, stop) = (f.path("plain.txt"), f.path(".env"), Arc::clone(&stop));
        std::thread::spawn(move || flip_link(link, a, b, stop))
    };
    let mut leaks = 0;
    for _ in 0..300 {
        let r = f.call("read_file", json!({"path": "notes.txt"}));
        leaks += usize::from(r.to_string().contains("hunter2"));
    }
    stop.store(true, Ordering::Relaxed);
    flipper.join().unwrap();
    assert_eq!(leaks, 0);
}

// ---- concurrent edits ------------------------------------------------------------------

/// A local file system where another writer appends a line to a file right after each
/// read of it, as a concurrent process would.
struct AppendAfterRead(LocalFileSystem);

impl FileSystem for AppendAfterRead {
    fn kind(&self) -> &str {
        self.0.kind()
    }
    fn cwd(&self) -> PathBuf {
        self.0.cwd()
    }
    fn home_dir(&self) -> Option<PathBuf> {
        self.0.home_dir()
    }
    fn metadata(&self, path: &Path) -> std::io::Result<crate::files::FileMeta> {
        self.0.metadata(path)
    }
    fn open(&self, path: &Path) -> std::io::Result<Box<dyn std::io::Read + Send>> {
        self.0.open(path)
    }
    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        let bytes = self.0.read(path)?;
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new().append(true).open(path)?;
        file.write_all(b"appended by another writer\n")?;
        Ok(bytes)
    }
    fn write_atomic(
        &self,
        path: &Path,
        contents: &[u8],
    ) -> std::io::Result<crate::files::WriteReport> {
        self.0.write_atomic(path, contents)
    }
    fn remove_file(&self, path: &Path) -> std::io::Result<()> {
        self.0.remove_file(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> std::io::Result<()> {
        self.0.rename(from, to)
    }
    fn list_dir(&self, path: &Path) -> std::io::Result<Vec<crate::files::DirEntry>> {
        self.0.list_dir(path)
    }
    fn walk(
        &self,
        root: &Path,
        options: &crate::files::WalkOptions,
        visit: &mut dyn FnMut(crate::files::WalkEntry) -> crate::files::WalkControl,
    ) -> std::io::Result<()> {
        self.0.walk(root, options, visit)
    }
}

fn appending_fixture() -> Fixture {
    fixture_with(|services, dir| {
        let fs: Arc<dyn FileSystem> = Arc::new(AppendAfterRead(LocalFileSystem::new(dir)));
        services.files = Arc::new(fs);
    })
}

#[test]
fn patch_fails_instead_of_dropping_a_concurrent_append() {
    let f = appending_fixture();
    f.put("log.txt", "a = 1\n");
    let r = f.call(
        "patch",
        json!({"path": "log.txt", "old_string": "a = 1", "new_string": "a = 2"}),
    );
    assert_eq!(r["success"], false, "{r}");
    assert!(error_of(&r).contains("re-read"), "{r}");
    let now = std::fs::read_to_string(f.path("log.txt")).unwrap();
    assert!(now.contains("appended by another writer"), "{now}");
}

#[test]
fn v4a_patch_fails_instead_of_dropping_a_concurrent_append() {
    let f = appending_fixture();
    f.put("log.txt", "a = 1\n");
    let patch = "*** Begin Patch\n*** Update File: log.txt\n-a = 1\n+a = 2\n*** End Patch";
    let r = f.call("patch", json!({"mode": "patch", "patch": patch}));
    assert_eq!(r["success"], false, "{r}");
    assert!(error_of(&r).contains("re-read"), "{r}");
    let now = std::fs::read_to_string(f.path("log.txt")).unwrap();
    assert!(now.contains("appended by another writer"), "{now}");
}

#[test]
fn write_file_with_a_stale_expected_hash_fails() {
    let f = fixture();
    f.put("n.txt", "one\n");
    let read = f.call("read_file", json!({"path": "n.txt"}));
    let hash = read["content_hash"].as_str().unwrap().to_string();
    let r = f.call(
        "write_file",
        json!({"path": "n.txt", "content": "two\n", "expected_hash": hash}),
    );
    assert!(r["error"].is_null(), "{r}");
    // The file changed since `hash` was read: the same call now fails.
    let r = f.call(
        "write_file",
        json!({"path": "n.txt", "content": "three\n", "expected_hash": hash}),
    );
    assert!(error_of(&r).contains("re-read"), "{r}");
    assert_eq!(std::fs::read_to_string(f.path("n.txt")).unwrap(), "two\n");
}
