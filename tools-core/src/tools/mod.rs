//! The core tools, known statically and registered in a fixed order.
//!
//! Each tool lives in its own file and exposes `build(&Arc<CoreServices>) ->
//! Result<ToolEntry, RegisterError>`. A tool that fails to build is logged and skipped;
//! the others still register.

mod args;
pub mod clarify;
mod file_guard;
mod file_lookup;
pub mod fuzzy_match;
pub mod memory;
pub mod patch;
pub mod read_file;
pub mod search_files;
mod text_file;
pub mod todo;
pub mod v4a;
pub mod write_file;

use std::sync::Arc;

use crate::entry::ToolEntry;
use crate::error::RegisterError;
use crate::registry::Registry;
use crate::services::CoreServices;

/// Builds one core tool.
pub type CoreToolBuilder = fn(&Arc<CoreServices>) -> Result<ToolEntry, RegisterError>;

/// Every core tool, in registration order.
pub const CORE_TOOLS: &[(&str, CoreToolBuilder)] = &[
    ("read_file", read_file::build),
    ("write_file", write_file::build),
    ("patch", patch::build),
    ("search_files", search_files::build),
    ("todo", todo::build),
    ("memory", memory::build),
    ("clarify", clarify::build),
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
