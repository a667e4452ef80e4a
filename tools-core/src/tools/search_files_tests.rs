//! Tests of `search_files.rs`.

use std::time::SystemTime;

use super::*;
use crate::files::LocalFileSystemProvider;
use crate::home::Home;
use crate::registry::Registry;

struct Fixture {
    dir: tempfile::TempDir,
    registry: Registry,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let mut services = CoreServices::for_tests(Home::at(dir.path().join(".home")));
    services.files = Arc::new(LocalFileSystemProvider::new(dir.path()));
    let registry = Registry::new();
    registry.register(build(&Arc::new(services)).unwrap());
    Fixture { dir, registry }
}

impl Fixture {
    fn put(&self, name: &str, content: impl AsRef<[u8]>) {
        let path = self.dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    fn search(&self, args: Value) -> Value {
        let r = self
            .registry
            .dispatch_blocking("search_files", args, &ToolContext::default());
        serde_json::from_str(&r.text).unwrap()
    }
}

#[test]
fn content_matches_with_line_numbers() {
    let f = fixture();
    f.put("src/a.rs", "fn main() {}\n// TODO: fix\n");
    f.put("src/b.rs", "nothing here\n");
    let r = f.search(json!({"pattern": "TODO"}));
    assert_eq!(r["total_count"], 1);
    assert_eq!(
        r["matches"],
        json!([{"path": "src/a.rs", "line": 2, "content": "// TODO: fix"}])
    );
}

#[test]
fn content_limit_offset_and_real_total() {
    let f = fixture();
    let body: String = (1..=12).map(|i| format!("hit {i}\n")).collect();
    f.put("many.txt", body);
    let r = f.search(json!({"pattern": "hit", "limit": 5, "offset": 5}));
    assert_eq!(r["total_count"], 12);
    assert_eq!(r["truncated"], true);
    assert_eq!(r["next_offset"], 10);
    let text = r["matches_text"].as_str().unwrap();
    assert!(text.starts_with("many.txt\n  6: hit 6"), "{text}");
    assert_eq!(text.lines().count(), 6);
}

#[test]
fn context_lines_are_marked_not_counted() {
    let f = fixture();
    f.put("c.txt", "a\nb\nMATCH\nd\ne\n");
    let r = f.search(json!({"pattern": "MATCH", "context": 1}));
    assert_eq!(r["total_count"], 1);
    assert_eq!(r["matches_text"], "c.txt\n  2- b\n  3: MATCH\n  4- d");
}

#[test]
fn context_stops_at_file_edges_and_separates_groups() {
    let f = fixture();
    f.put("e.txt", "HIT\nb\nc\nd\ne\nf\nHIT\n");
    let r = f.search(json!({"pattern": "HIT", "context": 1}));
    assert_eq!(
        r["matches_text"],
        "e.txt\n  1: HIT\n  2- b\n  --\n  6- f\n  7: HIT"
    );
}

#[test]
fn files_only_and_count_modes() {
    let f = fixture();
    f.put("x.py", "import os\nimport sys\n");
    f.put("y.py", "import re\n");
    f.put("z.txt", "import nothing\n");
    let r =
        f.search(json!({"pattern": "^import", "file_glob": "*.py", "output_mode": "files_only"}));
    assert_eq!(r["files"], json!(["x.py", "y.py"]));
    assert_eq!(r["total_count"], 2);
    let r = f.search(json!({"pattern": "^import", "file_glob": "*.py", "output_mode": "count"}));
    assert_eq!(r["counts"], json!({"x.py": 2, "y.py": 1}));
    assert_eq!(r["total_count"], 3);
}

#[test]
fn find_files_by_glob_newest_first() {
    let f = fixture();
    f.put("old.rs", "");
    f.put("deep/dir/new.rs", "");
    f.put("notes.md", "");
    let old = std::fs::File::options()
        .write(true)
        .open(f.dir.path().join("old.rs"))
        .unwrap();
    old.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000))
        .unwrap();
    let r = f.search(json!({"pattern": "*.rs", "target": "files"}));
    assert_eq!(r["files"], json!(["deep/dir/new.rs", "old.rs"]));
    assert_eq!(r["total_count"], 2);
}

#[test]
fn find_files_with_directory_globs() {
    let f = fixture();
    f.put("src/a.rs", "");
    f.put("src/deep/b.rs", "");
    f.put("tests/c.rs", "");
    let names = |pattern: &str| {
        let mut files: Vec<String> =
            f.search(json!({"pattern": pattern, "target": "files"}))["files"]
                .as_array()
                .map(|a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
                .unwrap_or_default();
        files.sort();
        files
    };
    assert_eq!(names("src/*.rs"), vec!["src/a.rs"]);
    assert_eq!(names("src/**/*.rs"), vec!["src/a.rs", "src/deep/b.rs"]);
    assert_eq!(names("**/*.rs").len(), 3);
}

#[test]
fn find_files_by_bare_name_and_limit() {
    let f = fixture();
    for name in ["app_config.yaml", "Config.toml", "main.rs"] {
        f.put(name, "");
    }
    let r = f.search(json!({"pattern": "config", "target": "files", "limit": 1}));
    assert_eq!(r["total_count"], 2);
    assert_eq!(r["files"].as_array().unwrap().len(), 1);
    assert_eq!(r["next_offset"], 1);
}

#[test]
fn hidden_ignored_binary_and_env_files_are_skipped() {
    let f = fixture();
    std::fs::create_dir_all(f.dir.path().join(".git")).unwrap();
    f.put(".gitignore", "build/\n");
    f.put("build/out.txt", "needle\n");
    f.put(".cache/x.txt", "needle\n");
    f.put("blob.bin2", b"needle\0\x01");
    f.put(".env", "needle=1\n");
    f.put("ok.txt", "needle\n");
    let r = f.search(json!({"pattern": "needle", "output_mode": "files_only"}));
    assert_eq!(r["files"], json!(["ok.txt"]), "{r}");
    let r = f.search(json!({"pattern": "needle", "path": ".env"}));
    assert!(r["error"].as_str().unwrap().contains("Access denied"));
}

#[test]
fn missing_path_and_bad_regex_are_error_results() {
    let f = fixture();
    f.put("src/a.txt", "x");
    let r = f.search(json!({"pattern": "x", "path": "srx"}));
    assert!(
        r["error"]
            .as_str()
            .unwrap()
            .starts_with("Path not found: srx")
    );
    let r = f.search(json!({"pattern": "(unclosed"}));
    assert!(r["error"].as_str().unwrap().contains("invalid regex"));
}

#[test]
fn searching_a_single_file_shows_its_path() {
    let f = fixture();
    f.put("sub/one.txt", "alpha\n");
    let r = f.search(json!({"pattern": "alpha", "path": "sub/one.txt"}));
    assert_eq!(r["matches"][0]["path"], "sub/one.txt");
    let r = f.search(json!({"pattern": "alpha", "path": "./sub/"}));
    assert_eq!(r["matches"][0]["path"], "sub/one.txt");
}

#[test]
fn newline_regex_warns_when_nothing_matches() {
    let f = fixture();
    f.put("a.txt", "one\ntwo\n");
    let r = f.search(json!({"pattern": "one\\ntwo"}));
    assert_eq!(r["total_count"], 0);
    assert!(r["warning"].as_str().unwrap().contains("line-oriented"));
}

#[test]
fn entry_is_parallel_safe() {
    let f = fixture();
    assert_eq!(
        f.registry.get("search_files").unwrap().parallelism,
        Parallelism::Safe
    );
}
