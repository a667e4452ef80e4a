//! PID 1 of a docker-backend container. The engine's init (`"Init": true`: docker-init,
//! podman's catatonit) reaps the zombies that commands leave behind. An engine may lack
//! it — podman installed without recommended packages answers "container-init binary
//! not found … catatonit" — and then the container is created again without it, with a
//! shell loop as PID 1 that reaps every child it inherits, and one warning line.

use serde_json::{Value, json};

/// PID 1 without the engine's init: a shell whose `wait` reaps any child (orphans are
/// re-parented to it), ending on SIGTERM like an init would.
pub const REAPER: &str = "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait; done";

/// True when a failed container create says the engine has no init binary.
pub fn lacks_init(status: u16, message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    status >= 400
        && (message.contains("container-init")
            || message.contains("catatonit")
            || message.contains("docker-init")
            || message.contains("init binary"))
}

/// `body` without the engine's init: `Init` off and the reaping shell as the command.
pub fn without_init(body: &Value) -> Value {
    let mut body = body.clone();
    body["HostConfig"]["Init"] = json!(false);
    body["Cmd"] = json!(["sh", "-c", REAPER]);
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_init_binaries_are_recognised() {
        let cases = [
            (
                500,
                "container create: container-init binary not found on the host: stat /usr/libexec/podman/catatonit: no such file or directory",
                true,
            ),
            (
                500,
                "exec: \"docker-init\": executable file not found in $PATH",
                true,
            ),
            (404, "No such image: busybox", false),
            (500, "cannot allocate memory", false),
            (201, "catatonit", false),
        ];
        for (status, message, want) in cases {
            assert_eq!(lacks_init(status, message), want, "{status} {message}");
        }
    }

    #[test]
    fn the_fallback_body_turns_init_off_and_reaps_with_a_shell() {
        let body =
            json!({"Cmd": ["sleep", "infinity"], "HostConfig": {"Init": true, "CapDrop": ["ALL"]}});
        let fallback = without_init(&body);
        assert_eq!(fallback["HostConfig"]["Init"], json!(false));
        assert_eq!(fallback["HostConfig"]["CapDrop"], json!(["ALL"]));
        assert_eq!(fallback["Cmd"], json!(["sh", "-c", REAPER]));
    }

    /// A Docker API engine on a unix socket that refuses `"Init": true` the way podman
    /// without catatonit does, and records the create bodies it was sent.
    fn engine_without_init(
        socket: &std::path::Path,
    ) -> std::sync::Arc<std::sync::Mutex<Vec<Value>>> {
        use std::io::{BufRead, BufReader, Read, Write};
        let listener = std::os::unix::net::UnixListener::bind(socket).unwrap();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let record = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().take(2) {
                let mut stream = BufReader::new(stream.unwrap());
                let mut length = 0usize;
                loop {
                    let mut line = String::new();
                    stream.read_line(&mut line).unwrap();
                    let lower = line.to_ascii_lowercase();
                    if let Some(v) = lower.strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap();
                    }
                    if line == "\r\n" || line.is_empty() {
                        break;
                    }
                }
                let mut body = vec![0u8; length];
                stream.read_exact(&mut body).unwrap();
                let body: Value = serde_json::from_slice(&body).unwrap();
                let (status, answer) = if body["HostConfig"]["Init"] == json!(true) {
                    (
                        "500 Internal Server Error",
                        json!({"cause": "no such file or directory", "message": "container create: container-init binary not found on the host: stat /usr/libexec/podman/catatonit: no such file or directory", "response": 500}),
                    )
                } else {
                    ("201 Created", json!({"Id": "c0ffee", "Warnings": []}))
                };
                record.lock().unwrap().push(body);
                let text = answer.to_string();
                let reply = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                    text.len()
                );
                stream.get_mut().write_all(reply.as_bytes()).unwrap();
            }
        });
        seen
    }

    #[test]
    fn an_engine_without_init_gets_a_container_without_it() {
        use super::super::docker::create_container;
        use super::super::docker_api::{DockerApi, Endpoint};
        use super::super::settings::DockerSettings;
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("engine.sock");
        let seen = engine_without_init(&socket);
        let api = DockerApi::new(
            Endpoint::Unix(socket.display().to_string()),
            std::time::Duration::from_secs(10),
        );
        let id = create_container(&api, &DockerSettings::default(), "busybox", "t").unwrap();
        assert_eq!(id, "c0ffee");
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[0]["HostConfig"]["Init"], json!(true));
        assert_eq!(seen[1]["HostConfig"]["Init"], json!(false));
        assert_eq!(seen[1]["Cmd"], json!(["sh", "-c", REAPER]));
    }

    /// The reaping loop really reaps: made the subreaper of what it starts (as PID 1
    /// is of everything in the container), it leaves no zombie of an orphan behind.
    #[test]
    #[allow(unsafe_code)]
    fn the_reaper_reaps_orphans() {
        use std::os::unix::process::CommandExt;
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", &format!("(sleep 0.2 &) ; {REAPER}")]);
        // SAFETY: prctl(PR_SET_CHILD_SUBREAPER) is a bare syscall, async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                rustix::process::set_child_subreaper(Some(rustix::process::getpid()))
                    .map_err(std::io::Error::from)
            });
        }
        let mut reaper = cmd.spawn().unwrap();
        let children_of_reaper = |state: &str| {
            std::fs::read_dir("/proc")
                .unwrap()
                .flatten()
                .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
                .filter(|stat| {
                    let rest = stat.rsplit(')').next().unwrap_or_default();
                    let mut fields = rest.split_whitespace();
                    let st = fields.next().unwrap_or_default();
                    let ppid = fields.next().and_then(|p| p.parse::<u32>().ok());
                    (state.is_empty() || st == state) && ppid == Some(reaper.id())
                })
                .count()
        };
        // The orphan was re-parented to the reaper (so the check below can fail).
        std::thread::sleep(std::time::Duration::from_millis(100));
        let adopted = children_of_reaper("");
        std::thread::sleep(std::time::Duration::from_millis(600));
        let zombies = children_of_reaper("Z");
        reaper.kill().unwrap();
        reaper.wait().unwrap();
        assert!(
            adopted >= 2,
            "the orphan was not adopted ({adopted} children)"
        );
        assert_eq!(zombies, 0);
    }
}
