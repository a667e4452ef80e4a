//! A job's `script`: a file under `<home>/scripts/` run before the agent (its stdout
//! becomes context) or, with `no_agent`, as the whole job (its stdout is the message).
//! `.sh` / `.bash` run with `bash`, anything else with `python3`.
//!
//! The path the model gives is checked when the job is created: relative, no `~`, and
//! inside the scripts directory after resolving `..` and symlinks, so a job can only
//! run scripts the user put there. A `{"wakeAgent": false}` last line of output means
//! "nothing to do" (Hermes' wake gate).

use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use super::prompt::ScriptOutput;
use crate::environments::exec_policy::{self, Approval, CodePath, Floor};
use crate::environments::settings::LocalSettings;

/// Script output kept (bytes).
const MAX_OUTPUT: usize = 100_000;

/// Why a script path was refused (Hermes' messages).
pub fn validate_path(scripts_dir: &Path, raw: &str) -> Result<(), String> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(());
    }
    if raw.starts_with('/') || raw.starts_with('~') || raw.as_bytes().get(1) == Some(&b':') {
        return Err(format!(
            "Script path must be relative to {dir}/. Got absolute or home-relative path: '{raw}'. \
             Place scripts in {dir}/ and use just the filename.",
            dir = scripts_dir.display()
        ));
    }
    let mut depth: i32 = 0;
    for part in Path::new(raw).components() {
        match part {
            Component::Normal(_) => depth += 1,
            Component::ParentDir => depth -= 1,
            Component::CurDir => {}
            _ => depth = -1,
        }
        if depth < 0 {
            return Err(format!(
                "Script path escapes the scripts directory via traversal: '{raw}'"
            ));
        }
    }
    Ok(())
}

/// The script's file, when it resolves (symlinks followed) inside `scripts_dir`.
pub(super) fn resolve(scripts_dir: &Path, raw: &str) -> Result<PathBuf, String> {
    validate_path(scripts_dir, raw)?;
    let dir = scripts_dir
        .canonicalize()
        .map_err(|e| format!("scripts directory {}: {e}", scripts_dir.display()))?;
    let path = dir
        .join(raw.trim())
        .canonicalize()
        .map_err(|e| format!("script '{raw}' not found in {}: {e}", dir.display()))?;
    if !path.starts_with(&dir) {
        return Err(format!(
            "Script path escapes the scripts directory via traversal: '{raw}'"
        ));
    }
    Ok(path)
}

/// Run the script with a time limit; never panics, failure is `ok: false` with why.
pub fn run(scripts_dir: &Path, raw: &str, cwd: Option<&Path>, timeout: Duration) -> ScriptOutput {
    let fail = |text: String| ScriptOutput { ok: false, text };
    let path = match resolve(scripts_dir, raw) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    let interpreter = match path.extension().and_then(|e| e.to_str()) {
        Some("sh" | "bash") => "bash",
        _ => "python3",
    };
    let mut command = exec_policy::command(interpreter);
    command
        .arg(&path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .current_dir(cwd.unwrap_or(scripts_dir));
    // Nobody is there to approve a cron run: the whole floor, writable in the job's
    // workdir (else only /tmp); toolhost's home (scripts included) stays read-only.
    let writable = cwd.map_or_else(std::env::temp_dir, Path::to_path_buf);
    let toolhost_home = scripts_dir.parent().unwrap_or(scripts_dir);
    let floor = Floor::unattended(&LocalSettings::default(), &writable, toolhost_home);
    exec_policy::apply(
        &mut command,
        &floor,
        CodePath::CronScript,
        Approval::Unjudged,
    );
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) => return fail(format!("cannot start {interpreter}: {e}")),
    };
    let readers = [
        child.stdout.take().map(reader),
        child.stderr.take().map(reader),
    ];
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return fail(format!("waiting for the script: {e}")),
        }
    };
    let [stdout, stderr] = readers.map(|r| r.and_then(|h| h.join().ok()).unwrap_or_default());
    match status {
        None => fail(format!("Script timed out after {}s", timeout.as_secs())),
        Some(s) if s.success() => ScriptOutput {
            ok: true,
            text: stdout.trim().to_string(),
        },
        Some(s) => fail(format!(
            "Script exited with {s}\n{}\n{}",
            stdout.trim(),
            stderr.trim()
        )),
    }
}

fn reader(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = pipe.by_ref().take(MAX_OUTPUT as u64).read_to_end(&mut buf);
        let _ = std::io::copy(&mut pipe, &mut std::io::sink());
        String::from_utf8_lossy(&buf).into_owned()
    })
}

/// False when the output's last non-empty line is JSON with `"wakeAgent": false`.
pub fn wake_agent(output: &str) -> bool {
    let Some(last) = output.lines().rev().find(|l| !l.trim().is_empty()) else {
        return true;
    };
    match serde_json::from_str::<serde_json::Value>(last.trim()) {
        Ok(v) => v.get("wakeAgent") != Some(&serde_json::Value::Bool(false)),
        Err(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_outside_the_scripts_directory_are_refused() {
        let dir = Path::new("/h/scripts");
        for bad in ["/etc/passwd", "~/x.sh", "../x.sh", "a/../../x.sh", "C:x"] {
            assert!(validate_path(dir, bad).is_err(), "{bad}");
        }
        for good in ["watch.sh", "sub/check.py", "a/../b.py"] {
            assert!(validate_path(dir, good).is_ok(), "{good}");
        }
    }

    #[test]
    fn a_script_runs_with_bash_and_a_symlink_out_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("hi.sh"),
            "echo hello; echo '{\"wakeAgent\": false}'",
        )
        .unwrap();
        let out = run(dir.path(), "hi.sh", None, Duration::from_secs(10));
        assert!(out.ok, "{out:?}");
        assert!(out.text.starts_with("hello"));
        assert!(!wake_agent(&out.text));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/bin/sh", dir.path().join("out.sh")).unwrap();
            let out = run(dir.path(), "out.sh", None, Duration::from_secs(10));
            assert!(!out.ok && out.text.contains("escapes"), "{out:?}");
        }
    }

    #[test]
    fn a_slow_script_is_stopped() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("slow.sh"), "sleep 30").unwrap();
        let out = run(dir.path(), "slow.sh", None, Duration::from_millis(300));
        assert!(!out.ok && out.text.contains("timed out"), "{out:?}");
    }
}
