//! `execute_code` on the remote backends through the real `toolhost` binary: the script
//! runs where the task's terminal commands run (a podman container, a host reached over
//! ssh), its `read_file` and `terminal` calls come back over the file channel and run
//! through the host's whole pipeline, and a dangerous command inside the script comes
//! back refused. The CI busybox image has no python3, which the tool says; the full
//! round trip in a container uses the busybox + python3 image `.ci/setup-terminal.sh`
//! builds from this machine's interpreter. The sandbox (bubblewrap) carries the same
//! channel.

use serde_json::{Value, json};
use toolhost_tests::{TestHome, ci_services, require, stdout_json};

const DOCKER: &str = "podman's Docker API (TOOLHOST_TEST_DOCKER_*, .ci/setup-terminal.sh)";
const SSH: &str = "the test sshd (TOOLHOST_TEST_SSH_*, .ci/setup-terminal.sh)";

/// A hardline command that would be harmless if the floor ever failed: the device does
/// not exist.
const HARDLINE_PROBE: &str = "mkfs.ext4 /dev/sdzz9";

fn docker_config(image: &str) -> Option<String> {
    let host = ci_services::docker()?.host;
    Some(format!(
        "[terminal]\nbackend = \"docker\"\n\n[terminal.docker]\nhost = \"{host}\"\nimage = \"{image}\"\nmemory_mb = 512\nnetwork = false\n"
    ))
}

fn ssh_config() -> Option<String> {
    let ssh = ci_services::ssh()?;
    Some(format!(
        "[terminal]\nbackend = \"ssh\"\n\n[terminal.ssh]\nhost = \"{}\"\nport = {}\nuser = \"{}\"\nkey = \"{}\"\nknown_hosts_file = \"{}\"\n",
        ssh.host, ssh.port, ssh.user, ssh.key, ssh.known_hosts_file
    ))
}

/// Run `toolhost call execute_code` with `config` and the script `code`.
fn execute_code(config: &str, code: &str) -> Value {
    let home = TestHome::new();
    home.write_config(config);
    let args = json!({ "code": code }).to_string();
    let out = toolhost_tests::spawn_with_stdin(
        home.command(),
        &["call", "execute_code", "-"],
        Some(&args),
    )
    .wait_with_output()
    .unwrap();
    stdout_json(&out)
}

#[test]
#[ignore = "needs the test sshd (.ci/setup-terminal.sh)"]
fn over_ssh_a_script_reads_a_file_runs_a_command_and_is_refused_a_dangerous_one() {
    let config = require(ssh_config(), SSH);
    // The test sshd is this machine: the script sees the host's files through ssh.
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("data.txt"), "alpha\nbeta\n").unwrap();
    let victim = work.path().join("victim");
    std::fs::create_dir_all(victim.join("sub")).unwrap();
    let code = format!(
        "import os\n\
         from toolhost_tools import read_file, terminal\n\
         print('ssh' if os.environ.get('SSH_CONNECTION') else 'not over ssh')\n\
         print(read_file('{data}')['total_lines'])\n\
         print(terminal('echo from-shell')['output'])\n\
         d = terminal('rm -rf {victim}')\n\
         print(d['status'], 'BLOCKED' in d['error'])\n",
        data = work.path().join("data.txt").display(),
        victim = victim.display()
    );
    let r = execute_code(&config, &code);
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(r["output"], "ssh\n2\nfrom-shell\nblocked True\n", "{r}");
    assert_eq!(r["tool_calls_made"], 3);
    assert!(
        victim.join("sub").is_dir(),
        "the dangerous command did not run"
    );
}

#[test]
#[ignore = "needs the test sshd (.ci/setup-terminal.sh)"]
fn over_ssh_the_whole_script_check_applies() {
    let config = require(ssh_config(), SSH);
    let r = execute_code(
        &config,
        "import subprocess\nsubprocess.run(['rm', '-rf', '/tmp/th-never'])\n",
    );
    assert_eq!(r["status"], "error", "{r}");
    assert_eq!(r["tool_calls_made"], 0, "{r}");
    assert!(r.get("exit_code").is_none(), "the script ran: {r}");
}

#[test]
#[ignore = "needs podman (.ci/setup-terminal.sh)"]
fn in_a_container_without_python3_the_tool_says_so() {
    let image = require(ci_services::docker(), DOCKER).image;
    let config = docker_config(&image).unwrap();
    let r = execute_code(&config, "print(1)\n");
    assert_eq!(r["status"], "error", "{r}");
    let error = r["error"].as_str().unwrap();
    assert!(
        error.starts_with("Python 3 is not available in the docker environment"),
        "{error}"
    );
    assert_eq!(r["tool_calls_made"], 0);
}

#[test]
#[ignore = "needs podman (.ci/setup-terminal.sh)"]
fn in_a_container_a_script_reads_a_file_runs_a_command_and_is_refused_a_hardline_one() {
    let image = require(
        ci_services::var("TOOLHOST_TEST_DOCKER_PYTHON_IMAGE"),
        "the busybox + python3 image (TOOLHOST_TEST_DOCKER_PYTHON_IMAGE, .ci/setup-terminal.sh)",
    );
    let config = require(docker_config(&image), DOCKER);
    // Written by `terminal` inside the container: the script sees it, the host does not.
    let inside = format!("/tmp/th-exec-inside-{}", std::process::id());
    let code = format!(
        "import os\n\
         from toolhost_tools import read_file, terminal\n\
         print(terminal('echo inside > {inside} && echo written')['output'])\n\
         print(os.path.exists('{inside}'), read_file('{inside}')['content'].strip())\n\
         d = terminal({HARDLINE_PROBE:?})\n\
         print(d['status'], d.get('hardline'))\n"
    );
    let r = execute_code(&config, &code);
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(r["output"], "written\nTrue 1|inside\nblocked True\n", "{r}");
    assert!(
        !std::path::Path::new(&inside).exists(),
        "the script ran on the host"
    );
    assert_eq!(r["tool_calls_made"], 3);
}

#[test]
#[ignore = "needs bubblewrap (.ci/setup-terminal.sh)"]
fn in_the_sandbox_a_script_reads_a_file_and_runs_a_command_in_the_workdir() {
    let available = tools_core::environments::sandbox::availability(&Default::default());
    toolhost_tests::require_service(available.is_ok(), &format!("bubblewrap ({available:?})"));
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("in.txt"), "hello\n").unwrap();
    let config = format!(
        "[terminal]\nbackend = \"sandbox\"\n\n[terminal.sandbox]\nworkdir = \"{}\"\n",
        work.path().display()
    );
    let code = "import os\nfrom toolhost_tools import read_file, terminal\n\
                print(os.getcwd())\n\
                print(read_file('in.txt')['content'].strip(), terminal('echo hi')['output'])\n";
    let r = execute_code(&config, code);
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(
        r["output"],
        format!("{}\n1|hello hi\n", work.path().display()),
        "{r}"
    );
    assert_eq!(r["tool_calls_made"], 2);
}
