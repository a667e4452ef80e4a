//! Tests of `v4a.rs`.

use super::apply::insert_at_hint;
use super::*;
use crate::files::{FileSystem, LocalFileSystem};

#[test]
fn parses_all_operation_kinds() {
    let patch = "*** Begin Patch\n*** Update File: a.py\n@@ def f(): @@\n x = 1\n-y = 2\n+y = 3\n\n*** Add File: b.py\n+hello\n*** Delete File: c.py\n*** Move File: d.py -> e.py\n*** End Patch\n";
    let ops = parse(patch).unwrap();
    assert_eq!(
        ops,
        vec![
            Op::Update {
                path: "a.py".into(),
                move_to: None,
                hunks: vec![Hunk {
                    hint: Some("def f():".into()),
                    lines: vec![
                        HunkLine::Context("x = 1".into()),
                        HunkLine::Remove("y = 2".into()),
                        HunkLine::Add("y = 3".into()),
                    ],
                }],
            },
            Op::Add {
                path: "b.py".into(),
                lines: vec!["hello".into()],
            },
            Op::Delete {
                path: "c.py".into()
            },
            Op::Move {
                from: "d.py".into(),
                to: "e.py".into()
            },
        ]
    );
}

#[test]
fn update_without_hunks_is_a_parse_error() {
    let err = parse("*** Begin Patch\n*** Update File: a.py\n*** End Patch").unwrap_err();
    assert!(err.contains("no hunks"), "{err}");
}

#[test]
fn traversal_is_detected() {
    assert!(has_traversal("../etc/passwd"));
    assert!(has_traversal("a/../../b"));
    assert!(!has_traversal("a/b..c"));
}

fn sim_fs() -> (tempfile::TempDir, LocalFileSystem) {
    let dir = tempfile::tempdir().unwrap();
    let fs = LocalFileSystem::new(dir.path());
    (dir, fs)
}

#[test]
fn later_operations_see_earlier_ones() {
    let (dir, fs) = sim_fs();
    let patch = "*** Begin Patch\n*** Add File: n.txt\n+one\n*** Update File: n.txt\n-one\n+two\n*** End Patch";
    let ops = parse(patch).unwrap();
    let resolve = |p: &str| fs.resolve(p);
    let plan = plan(&ops, &fs, &resolve).unwrap();
    assert!(apply(&plan, &fs).is_empty());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("n.txt")).unwrap(),
        "two\n"
    );
}

#[test]
fn blank_context_lines_match_blank_file_lines() {
    let (dir, fs) = sim_fs();
    std::fs::write(dir.path().join("f.txt"), "a\n\nb\n").unwrap();
    let patch = "*** Begin Patch\n*** Update File: f.txt\n a\n\n-b\n+c\n*** End Patch";
    let ops = parse(patch).unwrap();
    let resolve = |p: &str| fs.resolve(p);
    let plan = plan(&ops, &fs, &resolve).unwrap();
    assert!(apply(&plan, &fs).is_empty());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("f.txt")).unwrap(),
        "a\n\nc\n"
    );
}

#[test]
fn addition_only_hunk_inserts_after_hint() {
    assert_eq!(
        insert_at_hint("a\nb\nc\n", Some("b"), "x").unwrap(),
        "a\nb\nx\nc\n"
    );
    assert_eq!(insert_at_hint("a", None, "x").unwrap(), "a\nx\n");
    assert!(insert_at_hint("b\nb\n", Some("b"), "x").is_err());
}
