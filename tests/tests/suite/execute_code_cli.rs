//! `execute_code` through the real `toolhost` binary: a real python3 script calls
//! `read_file` and `terminal` over the socket, each call runs the whole pipeline, and a
//! dangerous command inside the script comes back refused (no human to approve it).

use serde_json::json;
use toolhost_tests::{TestHome, require_service, stdout_json};

fn python3() -> bool {
    std::process::Command::new("python3")
        .arg("-c")
        .arg("")
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn a_script_reads_a_file_runs_a_command_and_is_refused_a_dangerous_one() {
    require_service(python3(), "python3");
    let home = TestHome::new();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("data.txt"), "alpha\nbeta\n").unwrap();
    let victim = work.path().join("victim");
    std::fs::create_dir_all(victim.join("sub")).unwrap();
    let code = format!(
        "from toolhost_tools import read_file, terminal\n\
         r = read_file('{data}')\n\
         print(r['total_lines'])\n\
         print(terminal('echo from-shell')['output'])\n\
         d = terminal('rm -rf {victim}')\n\
         print(d['status'], 'BLOCKED' in d['error'])\n",
        data = work.path().join("data.txt").display(),
        victim = victim.display()
    );
    let args = json!({ "code": code }).to_string();
    let mut cmd = home.command();
    cmd.current_dir(work.path());
    let out = toolhost_tests::spawn_with_stdin(cmd, &["call", "execute_code", "-"], Some(&args))
        .wait_with_output()
        .unwrap();
    let r = stdout_json(&out);
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(r["output"], "2\nfrom-shell\nblocked True\n", "{r}");
    assert_eq!(r["tool_calls_made"], 3);
    assert!(
        victim.join("sub").is_dir(),
        "the dangerous command did not run"
    );
}

#[test]
fn the_description_lists_only_available_allowed_tools() {
    let home = TestHome::new();
    let out = home.run(&["schema", "--toolsets", "code_execution,file"], None);
    let defs = stdout_json(&out);
    let Some(exec) = defs
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["function"]["name"] == "execute_code")
    else {
        // Unavailable without python3: absent from definitions.
        assert!(!python3());
        return;
    };
    let description = exec["function"]["description"].as_str().unwrap();
    assert!(description.contains("read_file(path: str"), "{description}");
    assert!(!description.contains("terminal(command"), "{description}");
    assert!(!description.contains("web_search("), "{description}");
}
