//! Every core tool's JSON schema against its argument struct (see `args_check.rs`).

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::args_check::check;
use super::{CORE_TOOLS, register_core_tools};
use crate::cron::actions::CronArgs;
use crate::home::Home;
use crate::registry::Registry;
use crate::services::CoreServices;

type Checker = fn(&Value) -> Result<(), String>;

/// The tools whose handler (and argument struct) is the host's agent loop; the host's
/// tests check them against these schemas.
const HOST_ANSWERED: [&str; 2] = ["session_search", "delegate_task"];

/// A schema with no parameters the struct reads but does not advertise.
fn of<T: DeserializeOwned>(parameters: &Value) -> Result<(), String> {
    check::<T>(parameters, &[])
}

/// `cronjob`: Hermes' handler also takes these without advertising them.
fn cronjob(parameters: &Value) -> Result<(), String> {
    check::<CronArgs>(
        parameters,
        &[
            "include_disabled",
            "skill",
            "provider",
            "base_url",
            "reason",
        ],
    )
}

const TABLE: &[(&str, Checker)] = &[
    ("terminal", of::<super::terminal::TerminalArgs>),
    ("process", of::<super::process::ProcessArgs>),
    ("read_file", of::<super::read_file::ReadFileArgs>),
    ("write_file", of::<super::write_file::WriteFileArgs>),
    ("patch", of::<super::patch::PatchArgs>),
    ("search_files", of::<super::search_files::SearchFilesArgs>),
    ("todo", of::<crate::agent_loop::TodoArgs>),
    ("memory", of::<crate::agent_loop::MemoryArgs>),
    ("clarify", of::<super::clarify::ClarifyArgs>),
    ("skills_list", of::<super::skills::ListArgs>),
    ("skill_view", of::<super::skills::ViewArgs>),
    ("skill_manage", of::<crate::skills::manage::ManageArgs>),
    #[cfg(unix)]
    ("execute_code", of::<super::execute_code::ExecuteCodeArgs>),
    ("cronjob", cronjob),
];

#[test]
fn every_core_tool_has_an_argument_struct_check() {
    let mut checked: Vec<&str> = TABLE.iter().map(|(name, _)| *name).collect();
    checked.extend(HOST_ANSWERED);
    checked.sort_unstable();
    let mut core: Vec<&str> = CORE_TOOLS.iter().map(|(name, _)| *name).collect();
    core.sort_unstable();
    assert_eq!(checked, core);
}

#[test]
fn every_schema_matches_its_argument_struct() {
    let registry = Registry::new();
    let services = Arc::new(CoreServices::for_tests(Home::at("/nonexistent")));
    assert!(register_core_tools(&registry, &services).is_empty());
    let mut failures = Vec::new();
    for &(name, checker) in TABLE {
        let entry = registry.get(name).unwrap();
        if let Err(problem) = checker(&entry.parameters) {
            failures.push(format!("{name}: {problem}"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
