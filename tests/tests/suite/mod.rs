//! The integration-test modules, one per topic, plus `mcp_common` (helpers shared by the
//! MCP tests). Tests needing an outside service are `#[ignore = "needs …"]` and fail
//! loudly when run without it (`toolhost_tests::require_service`).

mod approvals_cli;
mod bounds_cli;
mod cli_closed_pipe;
mod cli_contract;
mod cron_scheduler;
mod execute_code_cli;
mod floor_doors;
mod gaps_chat;
mod install;
mod isolation_process;
mod loop_real_model;
mod loop_run;
mod mcp_client;
mod mcp_common;
mod mcp_hardening;
mod mcp_resources;
mod mcp_server;
mod mcp_server_http;
mod mcp_stalls;
mod mcpweb_task_support;
mod plugin_collision;
mod plugin_defaults;
mod plugin_failures;
mod plugin_hooks;
mod plugin_runtime;
mod plugin_scaffold;
mod plugin_sources;
mod plugin_stdout;
mod pyplug_dispatch_pipeline;
mod pyplug_hermes_pypi;
mod pyplug_lifecycle;
mod pyplug_python_plugins;
mod remcode_execute_code_remote;
mod sec_state_integrity;
mod skills_cli;
mod tapfix_json_listing;
mod terminal_backends;
mod web_plugin;
