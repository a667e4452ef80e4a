//! The core tools, known statically and registered in a fixed order.
//!
//! Each tool lives in its own file and exposes `build(&Arc<CoreServices>) ->
//! Result<ToolEntry, RegisterError>`. A tool that fails to build is logged and skipped;
//! the others still register.

pub mod args;
#[cfg(any(test, feature = "test-support"))]
pub mod args_check;
pub mod clarify;
pub mod cronjob;
pub mod delegate_task;
#[cfg(unix)]
pub mod execute_code;
mod file_guard;
mod file_lookup;
pub mod fuzzy_match;
mod guarded_reader;
pub mod guarded_write;
#[cfg(test)]
mod guarded_write_tests;
pub mod home_mention;
pub mod memory;
pub mod patch;
pub mod read_file;
pub mod search_files;
mod secret_files;
pub mod session_search;
pub mod skills;
mod text_file;
pub mod todo;
pub mod v4a;
pub mod write_file;

#[cfg(test)]
mod args_schema_tests;
#[cfg(test)]
mod file_security_tests;

use std::sync::Arc;

use crate::entry::ToolEntry;
use crate::error::RegisterError;
use crate::registry::Registry;
use crate::services::CoreServices;

pub mod process;
pub mod process_stdin;
#[cfg(test)]
mod process_tests;
pub mod terminal;

/// Builds one core tool.
pub type CoreToolBuilder = fn(&Arc<CoreServices>) -> Result<ToolEntry, RegisterError>;

/// Every core tool, in registration order.
pub const CORE_TOOLS: &[(&str, CoreToolBuilder)] = &[
    ("terminal", terminal::build),
    ("process", process::build),
    ("read_file", read_file::build),
    ("write_file", write_file::build),
    ("patch", patch::build),
    ("search_files", search_files::build),
    ("todo", todo::build),
    ("memory", memory::build),
    ("clarify", clarify::build),
    ("skills_list", skills::build_list),
    ("skill_view", skills::build_view),
    ("skill_manage", skills::build_manage),
    ("session_search", session_search::build),
    ("delegate_task", delegate_task::build),
    #[cfg(unix)]
    ("execute_code", execute_code::build),
    ("cronjob", cronjob::build),
];

/// A core tool that could not be registered.
#[derive(Debug)]
pub struct CoreToolFailure {
    /// The tool's name.
    pub name: &'static str,
    /// Why it failed.
    pub error: RegisterError,
}

/// Register every core tool; returns the ones that failed (already logged).
pub fn register_core_tools(
    registry: &Registry,
    services: &Arc<CoreServices>,
) -> Vec<CoreToolFailure> {
    register_tools(registry, services, CORE_TOOLS)
}

/// Register `tools` in order, isolating failures (also used by tests with a broken builder).
pub fn register_tools(
    registry: &Registry,
    services: &Arc<CoreServices>,
    tools: &[(&'static str, CoreToolBuilder)],
) -> Vec<CoreToolFailure> {
    let mut failures = Vec::new();
    for &(name, build) in tools {
        let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| build(services)))
            .unwrap_or_else(|panic| {
                Err(RegisterError::Build {
                    name: name.to_string(),
                    reason: format!("panicked: {}", crate::availability::panic_message(&panic)),
                })
            });
        match built {
            Ok(entry) => {
                registry.register(entry);
            }
            Err(error) => {
                tracing::warn!(tool = name, %error, "core tool not registered");
                failures.push(CoreToolFailure { name, error });
            }
        }
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::home::Home;

    fn good(_: &Arc<CoreServices>) -> Result<ToolEntry, RegisterError> {
        ToolEntry::builder("good", "x").build()
    }
    fn bad(_: &Arc<CoreServices>) -> Result<ToolEntry, RegisterError> {
        Err(RegisterError::Build {
            name: "bad".into(),
            reason: "missing thing".into(),
        })
    }
    fn panics(_: &Arc<CoreServices>) -> Result<ToolEntry, RegisterError> {
        panic!("builder exploded")
    }

    #[test]
    fn core_tools_register_in_order() {
        let registry = Registry::new();
        let services = Arc::new(CoreServices::for_tests(Home::at("/nonexistent")));
        assert!(register_core_tools(&registry, &services).is_empty());
        let names: Vec<&str> = CORE_TOOLS.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names,
            [
                "terminal",
                "process",
                "read_file",
                "write_file",
                "patch",
                "search_files",
                "todo",
                "memory",
                "clarify",
                "skills_list",
                "skill_view",
                "skill_manage",
                "session_search",
                "delegate_task",
                "execute_code",
                "cronjob"
            ]
        );
        for name in names {
            let entry = registry.get(name).unwrap();
            assert!(entry.validator().is_some(), "{name} schema compiles");
            assert!(!entry.description.is_empty());
        }
        assert_eq!(registry.tools_in_toolset("file").len(), 4);
    }

    /// The file tools reach files only through the task's `FileSystem`: with an
    /// in-memory backend nothing touches the host's disk.
    #[test]
    fn file_tools_work_through_any_file_system() {
        use crate::files::{FileSystem, InMemoryFileSystem};
        use serde_json::{Value, json};

        let fs = Arc::new(InMemoryFileSystem::new("/work"));
        let mut services = CoreServices::for_tests(Home::at("/nonexistent"));
        services.files = Arc::new(Arc::clone(&fs) as Arc<dyn FileSystem>);
        let services = Arc::new(services);
        let registry = Registry::new();
        register_core_tools(&registry, &services);
        let call = |name: &str, args: Value| -> Value {
            let ctx = crate::context::ToolContext::for_task("t1");
            serde_json::from_str(&registry.dispatch_blocking(name, args, &ctx).text).unwrap()
        };

        let r = call(
            "write_file",
            json!({"path": "src/app.py", "content": "def f():\n    return 1\n"}),
        );
        assert_eq!(r["resolved_path"], "/work/src/app.py", "{r}");
        assert_eq!(
            call("read_file", json!({"path": "src/app.py"}))["content"],
            "1|def f():\n2|    return 1"
        );
        let r = call(
            "patch",
            json!({"path": "/work/src/app.py", "old_string": "return 1", "new_string": "return 2"}),
        );
        assert_eq!(r["success"], true, "{r}");
        let r = call("search_files", json!({"pattern": "return \\d"}));
        assert_eq!(
            r["matches"][0],
            json!({"path": "src/app.py", "line": 2, "content": "    return 2"})
        );
        let r = call(
            "search_files",
            json!({"pattern": "*.py", "target": "files"}),
        );
        assert_eq!(r["files"], json!(["src/app.py"]));
        let r = call(
            "patch",
            json!({"mode": "patch", "patch": "*** Begin Patch\n*** Move File: src/app.py -> lib/app.py\n*** End Patch"}),
        );
        assert_eq!(r["success"], true, "{r}");
        assert!(fs.get(std::path::Path::new("/work/lib/app.py")).is_some());
        assert!(!std::path::Path::new("/work/lib/app.py").exists());
    }

    #[test]
    fn one_failing_tool_never_stops_the_others() {
        let registry = Registry::new();
        let services = Arc::new(CoreServices::for_tests(Home::at("/nonexistent")));
        let failures = register_tools(
            &registry,
            &services,
            &[("bad", bad), ("panics", panics), ("good", good)],
        );
        assert_eq!(registry.names(), vec!["good".to_string()]);
        assert_eq!(failures.len(), 2);
        assert!(failures[1].error.to_string().contains("builder exploded"));
    }
}
