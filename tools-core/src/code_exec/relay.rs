//! The file-based tool channel of a script running in a remote environment (docker,
//! ssh, sandbox, ...), whose processes cannot reach a socket on the host.
//!
//! The script's module writes each call as a request file `rpc/req_<id>` and waits for
//! `rpc/res_<id>` ([`super::stubs::Transport::Files`]). Instead of Hermes' polling from
//! the host (an `ls`, a `cat`, a write and an `rm` — four commands in the environment
//! per call, plus one every 100 ms while idle), one small Python relay started in the
//! environment next to the script watches the directory, prints each request as a line
//! and deletes it; the host reads those lines from the relay's output stream, answers
//! them with the run's [`Dispatcher`] (token, allowlist, call limit, then the host's
//! whole pipeline) and writes the response with one [`Environment::write_file`]. Only
//! the backend's public operations are used, so every backend that can start a
//! command and write a file carries the channel.
//!
//! Requests are answered one at a time, in arrival order. A request whose id is not
//! `<digits>_<digits>` is dropped: the id names the response file, and must not name
//! anything outside the run's directory.
//!
//! [`Environment::write_file`]: crate::environments::Environment::write_file

use std::io::{BufRead, BufReader, Read};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::Value;

use super::dispatch::Dispatcher;
use crate::environments::shell::quote;
use crate::environments::{EnvError, RunningCommand, TaskEnvironment};

/// Longest a response write may take.
const WRITE_TIMEOUT: Duration = Duration::from_secs(60);

/// The relay, run by `python3 -c` with the request directory as its argument: it
/// polls (0.5 ms, backing off to 20 ms while idle), prints each complete request
/// (never a `.tmp`) as one line, deletes it, and exits when the directory is removed.
pub const RELAY_SOURCE: &str = r#"import os, sys, time
rpc = sys.argv[1]
out = sys.stdout.buffer
delay = 0.0005
while True:
    try:
        names = sorted(n for n in os.listdir(rpc) if n.startswith("req_") and not n.endswith(".tmp"))
    except OSError:
        break
    if not names:
        time.sleep(delay)
        delay = min(delay * 2, 0.02)
        continue
    delay = 0.0005
    for name in names:
        path = os.path.join(rpc, name)
        try:
            with open(path, "rb") as f:
                data = f.read()
            os.unlink(path)
        except OSError:
            continue
        out.write(data.replace(b"\n", b" ").strip() + b"\n")
        out.flush()
"#;

/// Whether `id` may name a response file: `<pid>_<sequence>`.
pub fn valid_id(id: &str) -> bool {
    let mut parts = id.split('_');
    let all_digits = |p: Option<&str>| {
        p.is_some_and(|p| !p.is_empty() && p.len() <= 20 && p.bytes().all(|b| b.is_ascii_digit()))
    };
    all_digits(parts.next()) && all_digits(parts.next()) && parts.next().is_none()
}

/// The response file's name for a request line, if it carries a valid id.
fn response_name(line: &str) -> Option<String> {
    let request: Value = serde_json::from_str(line).ok()?;
    let id = request.get("id")?.as_str()?;
    valid_id(id).then(|| format!("res_{id}"))
}

/// A running relay and the host thread answering it.
pub struct Relay {
    child: Box<dyn RunningCommand>,
    reader: Option<JoinHandle<()>>,
}

impl Relay {
    /// Start the relay on `rpc_dir` (which must exist) in `env`, answering with
    /// `dispatcher`.
    pub fn start(
        env: &Arc<TaskEnvironment>,
        python: &str,
        rpc_dir: &str,
        dispatcher: Arc<Dispatcher>,
    ) -> Result<Self, EnvError> {
        let command = format!(
            "{} -u -c {} {} 2>/dev/null </dev/null",
            quote(python),
            quote(RELAY_SOURCE),
            quote(rpc_dir)
        );
        let (mut child, _) = env.spawn_background(&command, Some("/"), false, false)?;
        let output = child.take_output();
        let env = Arc::clone(env);
        let rpc_dir = rpc_dir.trim_end_matches('/').to_string();
        let reader = output.and_then(|output| {
            std::thread::Builder::new()
                .name("execute_code-relay".into())
                .spawn(move || answer_requests(output, &env, &rpc_dir, &dispatcher))
                .ok()
        });
        Ok(Relay { child, reader })
    }

    /// Stop the relay (killing it if the removed directory has not already ended it)
    /// and wait for the host thread, which finishes the call it is answering.
    pub fn stop(mut self) {
        for _ in 0..25 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            self.child.kill();
        }
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

fn answer_requests(
    output: Box<dyn Read + Send>,
    env: &TaskEnvironment,
    rpc_dir: &str,
    dispatcher: &Dispatcher,
) {
    let mut reader = BufReader::new(output);
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let line = line.trim();
        let Some(name) = response_name(line) else {
            if !line.is_empty() {
                tracing::debug!("execute_code relay: dropped a request without a valid id");
            }
            continue;
        };
        let mut reply = dispatcher.answer(line);
        reply.push('\n');
        let path = format!("{rpc_dir}/{name}");
        if let Err(err) = env
            .backend()
            .write_file(&path, reply.as_bytes(), WRITE_TIMEOUT)
        {
            tracing::warn!(%err, "execute_code: could not write a tool response into the environment");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_pid_and_sequence_ids_name_response_files() {
        let cases: &[(&str, bool)] = &[
            ("123_1", true),
            ("1_000001", true),
            ("", false),
            ("123", false),
            ("123_", false),
            ("_1", false),
            ("1_2_3", false),
            ("../x_1", false),
            ("1_2/../../etc", false),
            ("１_2", false),
            ("123456789012345678901_1", false),
        ];
        for (id, ok) in cases {
            assert_eq!(valid_id(id), *ok, "{id:?}");
        }
    }

    #[test]
    fn the_response_name_comes_from_the_request_id() {
        assert_eq!(
            response_name(r#"{"tool":"x","id":"7_2","token":"t"}"#).as_deref(),
            Some("res_7_2")
        );
        assert_eq!(response_name(r#"{"tool":"x","id":7}"#), None);
        assert_eq!(response_name("not json"), None);
    }
}
