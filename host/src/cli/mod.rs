//! The `toolhost` command line. The contract of every subcommand (flags, JSON shapes,
//! exit codes) is relied on by tests and tooling: change it only additively.
//!
//! Exit codes: 0 success (also when stdout is closed early, as by `| head`:
//! `closed_pipe`); 1 the tool result is an error object (`call`) or the model failed
//! (`run`); 2 bad usage or input, or toolhost could not start (bad config); `run` adds 3
//! (model-call limit), 4 (ended by a turn rule) and 130 (interrupted).

mod approvals;
mod approvals_actions;
mod call;
mod chat;
mod closed_pipe;
mod cron;
mod dispatch;
mod input;
mod interrupt;
mod logging;
mod mcp;
mod plugin_host;
mod plugins;
mod protocol_stdout;
mod run;
mod schema;
mod selection;
mod skills;
mod spinner;
mod tools;
mod toolsets;

pub use selection::SelectionArgs;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use tools_core::Home;

use crate::app::{StartError, StartOptions, Toolhost};
use crate::config::LoadedConfig;
use crate::mcp::McpScope;

/// A tool runtime for LLM agents.
#[derive(Debug, Parser)]
#[command(name = "toolhost", version, about, propagate_version = true)]
pub struct Cli {
    /// Home directory (default: $TOOLHOST_HOME, else ~/.config/toolhost).
    #[arg(long, global = true, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Configuration file (default: `<home>/config.toml`).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// More logging on stderr (-v info, -vv debug, -vvv trace; RUST_LOG overrides).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the tools of the selected toolsets, available or not.
    Tools(tools::ToolsArgs),
    /// List every toolset with its resolved tools.
    Toolsets(toolsets::ToolsetsArgs),
    /// Print the OpenAI tool definitions of the selected toolsets.
    Schema(schema::SchemaArgs),
    /// Run one tool call through the whole pipeline and print its result.
    Call(call::CallArgs),
    /// Execute the tool calls of an assistant message; print the tool messages.
    Dispatch(dispatch::DispatchArgs),
    /// MCP: list the configured servers, or serve toolhost's tools to MCP clients.
    Mcp(mcp::McpArgs),
    /// Manage native plugins: list, info, doctor, new, install, enable, disable.
    Plugins(plugins::PluginsArgs),
    /// Judge commands with the dangerous-command detector; manage permanent approvals.
    Approvals(approvals::ApprovalsArgs),
    /// Skills: list, view, check a skill folder with the guard, install one.
    Skills(skills::SkillsArgs),
    /// Run one task through the agent loop with the configured model; print the answer.
    Run(run::RunArgs),
    /// Chat with the configured model interactively, with the tools.
    Chat(chat::ChatArgs),
    /// Scheduled jobs: run what is due (tick), keep running (daemon), show runs.
    Cron(cron::CronArgs),
    /// Serve one out-of-process plugin to its host (started by toolhost itself).
    #[command(hide = true)]
    PluginHost(plugin_host::PluginHostArgs),
}

/// Why a command failed (printed as one line on stderr, exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// toolhost could not start.
    #[error(transparent)]
    Start(#[from] StartError),
    /// The input was unusable.
    #[error("{0}")]
    Input(String),
    /// Reading or writing failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being read or written.
        what: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

impl Cli {
    fn start_options(&self) -> StartOptions {
        StartOptions {
            home: self.home.clone(),
            config: self.config.clone(),
            ..StartOptions::default()
        }
    }

    /// Start toolhost with every MCP server connected; every plugin that failed to
    /// load gets one line on stderr.
    fn start(&self) -> Result<Toolhost, CliError> {
        self.start_scoped(McpScope::All)
    }

    /// Start toolhost, starting only the MCP servers `scope` asks for.
    fn start_scoped(&self, scope: McpScope) -> Result<Toolhost, CliError> {
        let host = Toolhost::start(&StartOptions {
            mcp_scope: scope,
            ..self.start_options()
        })?;
        for failure in host.plugins.failures() {
            eprintln!("toolhost: {}", failure.failure_line());
        }
        Ok(host)
    }

    /// Start toolhost without reporting plugin failures (the `plugins` commands show
    /// them their own way) and without MCP servers (they need none).
    fn start_quiet(&self) -> Result<Toolhost, CliError> {
        let host = Toolhost::start(&StartOptions {
            skip_mcp: true,
            ..self.start_options()
        })?;
        warn_missing_bundle(&host);
        Ok(host)
    }

    /// The home directory.
    fn home(&self) -> Result<Home, CliError> {
        Home::resolve(self.home.as_deref()).map_err(|e| CliError::Start(e.into()))
    }

    /// The configuration, without starting anything.
    fn load_config(&self, home: &Home) -> Result<LoadedConfig, CliError> {
        LoadedConfig::load(self.config.as_deref(), &home.config_file())
            .map_err(|e| CliError::Start(e.into()))
    }
}

/// One line on stderr when the bundled plugins were left behind (a copied binary).
fn warn_missing_bundle(host: &Toolhost) {
    if let Some(missing) = crate::plugins::bundle::missing_bundle(&host.config.config.plugins) {
        eprintln!("toolhost: warning: {missing}");
    }
}

/// Parse the command line, run it, and map the outcome to an exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    logging::init(cli.verbose);
    let outcome = closed_pipe::run(|| match &cli.command {
        Command::Tools(args) => tools::run(&cli, args),
        Command::Toolsets(args) => toolsets::run(&cli, args),
        Command::Schema(args) => schema::run(&cli, args),
        Command::Call(args) => call::run(&cli, args),
        Command::Dispatch(args) => dispatch::run(&cli, args),
        Command::Mcp(args) => mcp::run(&cli, args),
        Command::Plugins(args) => plugins::run(&cli, args),
        Command::Approvals(args) => approvals::run(&cli, args),
        Command::Skills(args) => skills::run(&cli, args),
        Command::Run(args) => run::run(&cli, args),
        Command::Chat(args) => chat::run(&cli, args),
        Command::Cron(args) => cron::run(&cli, args),
        Command::PluginHost(args) => plugin_host::run(&cli, args),
    });
    match outcome {
        Ok(code) => code,
        Err(err) => {
            eprintln!("toolhost: {err}");
            ExitCode::from(2)
        }
    }
}
