//! Toolhost's own state survives concurrent processes and killed writers: parallel
//! `toolhost call todo` merges all land, and temporary files a killed process left
//! behind in the home are removed on the next start.

use toolhost_tests::{TestHome, spawn_with_stdin, stdout_json};

#[test]
fn parallel_todo_merges_from_many_processes_are_all_kept() {
    let home = TestHome::new();
    let children: Vec<_> = (0..40)
        .map(|i| {
            let args = format!(
                r#"{{"merge": true, "todos": [{{"id": "{i}", "content": "item {i}", "status": "pending"}}]}}"#
            );
            spawn_with_stdin(home.command(), &["call", "todo", &args], None)
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{out:?}");
        assert!(stdout_json(&out)["error"].is_null(), "{out:?}");
    }
    let out = home.run(&["call", "todo", "{}"], None);
    let list = stdout_json(&out);
    let mut ids: Vec<u32> = list["todos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().parse().unwrap())
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..40).collect::<Vec<u32>>(), "{list}");
}

#[test]
fn leftover_temporary_files_in_the_home_are_removed_on_start() {
    let home = TestHome::new();
    let todos = home.path().join("state/todos");
    std::fs::create_dir_all(&todos).unwrap();
    let leftover = todos.join(".toolhost-tmp-abc123");
    std::fs::write(&leftover, "half a todo list").unwrap();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&leftover)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let keep = todos.join("notes-toolhost-tmp.txt");
    std::fs::write(&keep, "not ours").unwrap();
    let out = home.run(&["call", "todo", "{}"], None);
    assert!(stdout_json(&out)["todos"].is_array(), "{out:?}");
    assert!(!leftover.exists());
    assert!(keep.exists());
}
