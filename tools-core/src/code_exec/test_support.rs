//! What the `execute_code` tests of both channels share (`tests` for the Unix socket on
//! the host, `remote_tests` for the file channel in a task environment): a
//! [`ToolCaller`] over a registry of two test tools, and the check that python3 is
//! there. One copy, so the two channels are tested against the same tools and the
//! refusal texts they assert name the same allowlist.

use std::sync::Arc;

use serde_json::{Value, json};

use super::ToolCaller;
use crate::context::ToolContext;
use crate::entry::ToolEntry;
use crate::registry::Registry;

/// The test tools, the allowlist of a script that may call both: `echo` answers
/// `{"echo": args}`, `multiline` a text with a raw newline. The registry also holds
/// `cpus`: how many CPUs the serving thread may use, and with a `pid` argument the CPUs
/// that process's main thread holds (`Cpus_allowed_list`), for the CPU co-location
/// tests.
pub(super) const TEST_TOOLS: &[&str] = &["echo", "multiline"];

/// Calls straight into a registry (the host's caller adds the pipeline around it).
struct RegistryCaller(Registry);

impl ToolCaller for RegistryCaller {
    fn call(&self, name: &str, args: &Value, ctx: &ToolContext) -> String {
        self.0.dispatch_blocking(name, args.clone(), ctx).text
    }
    fn available(&self, name: &str) -> bool {
        self.0.contains(name)
    }
}

/// A caller over a registry holding [`TEST_TOOLS`].
pub(super) fn caller() -> Arc<dyn ToolCaller> {
    let registry = Registry::new();
    registry.register(
        ToolEntry::builder("echo", "test")
            .sync_handler(|args, _| Ok(json!({"echo": args})))
            .build()
            .unwrap(),
    );
    registry.register(
        ToolEntry::builder("cpus", "test")
            .sync_handler(|args, _| {
                let script = args["pid"].as_u64().map(|pid| {
                    std::fs::read_to_string(format!("/proc/{pid}/status"))
                        .unwrap()
                        .lines()
                        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                        .unwrap()
                        .trim()
                        .to_string()
                });
                Ok(json!({"cpus": allowed_cpus(), "script": script}))
            })
            .build()
            .unwrap(),
    );
    registry.register(
        ToolEntry::builder("multiline", "test")
            .sync_handler(|_, _| Ok(json!({"text": "a\nb"})))
            .build()
            .unwrap(),
    );
    Arc::new(RegistryCaller(registry))
}

/// How many CPUs the calling thread may run on.
pub(super) fn allowed_cpus() -> u32 {
    rustix::thread::sched_getaffinity(None).map_or(0, |set| set.count())
}

/// execute_code runs python3 scripts: these tests need it (CI installs it) and fail
/// loudly without it rather than pass without running.
pub(super) fn require_python() {
    let found = std::process::Command::new("python3")
        .arg("-c")
        .arg("")
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found,
        "python3 is needed by the execute_code tests and is not installed"
    );
}
