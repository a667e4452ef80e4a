//! `toolhost plugins ...`: list, inspect, diagnose, create, install, enable and disable
//! native plugins.
//!
//! `list`, `info` and `doctor` start the host (they load plugins to report on them);
//! `reload` asks running hosts to replace a process plugin's child (see
//! `plugins::control`);
//! `enable`, `disable`, `new` and `install` never load a plugin, so a plugin that
//! crashes the host can still be turned off.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::json;
use tools_core::config_edit;

use super::{Cli, CliError};
use crate::app::Toolhost;
use crate::plugins::discovery::{self, Roots};
use crate::plugins::install::{InstallOptions, install};
use crate::plugins::manifest::{host_api_requirement, host_api_version};
use crate::plugins::scaffold::{ApiSource, create};
use crate::plugins::{Isolation, PluginKind, PluginRecord, PluginStatus};

/// `println!` that ignores a closed stdout (`toolhost plugins list | head`).
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// Arguments of `toolhost plugins`.
#[derive(Debug, Args)]
pub struct PluginsArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: PluginsCommand,
}

/// `toolhost plugins` subcommands.
#[derive(Debug, Subcommand)]
pub enum PluginsCommand {
    /// List every plugin found: loaded, disabled or failed.
    List {
        /// One JSON array on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Everything about one plugin.
    Info {
        /// Plugin name.
        name: String,
        /// A JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Check every plugin and print the full detail of every problem (exit 1 if any
    /// plugin failed).
    Doctor,
    /// Create a plugin crate that builds and loads as it is.
    New {
        /// Plugin (and crate) name.
        name: String,
        /// Parent directory (default: the current directory).
        #[arg(long, value_name = "DIR")]
        path: Option<PathBuf>,
        /// Depend on the plugin-api sources in DIR (default: the sources this toolhost
        /// was built from, or $TOOLHOST_PLUGIN_API_PATH).
        #[arg(long, value_name = "DIR", conflicts_with = "api_version")]
        api_path: Option<PathBuf>,
        /// Depend on this crates.io version of toolhost-plugin-api instead.
        #[arg(long, value_name = "VERSION")]
        api_version: Option<String>,
    },
    /// Install a plugin: a crate directory (built with cargo), a plugin directory, or a
    /// library file.
    Install {
        /// What to install.
        path: PathBuf,
        /// Build a crate with the dev profile instead of --release.
        #[arg(long)]
        debug: bool,
        /// Install into DIR instead of <home>/plugins (e.g. a TOOLHOST_PLUGIN_PATH entry).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Replace a process plugin (native or Python) with a fresh process running the code
    /// now on disk, in every running host of this home; with none running, check that it
    /// reloads and show what it registers.
    Reload {
        /// Plugin name.
        name: String,
    },
    /// Turn a plugin on (edits config.toml, keeping its comments).
    Enable {
        /// Plugin name.
        name: String,
    },
    /// Turn a plugin off (edits config.toml, keeping its comments).
    Disable {
        /// Plugin name.
        name: String,
    },
}

/// Run `toolhost plugins ...`.
pub fn run(cli: &Cli, args: &PluginsArgs) -> Result<ExitCode, CliError> {
    match &args.command {
        PluginsCommand::List { json } => list(&cli.start_quiet()?, *json),
        PluginsCommand::Info { name, json } => info(&cli.start_quiet()?, name, *json),
        PluginsCommand::Doctor => doctor(&cli.start_quiet()?),
        PluginsCommand::New {
            name,
            path,
            api_path,
            api_version,
        } => new(name, path.as_deref(), api_path.clone(), api_version.clone()),
        PluginsCommand::Install { path, debug, dir } => {
            let destination = match dir {
                Some(dir) => dir.clone(),
                None => cli.home()?.plugins_dir(),
            };
            let installed = install(&InstallOptions {
                source: path.clone(),
                destination,
                release: !debug,
            })
            .map_err(|e| CliError::Input(e.to_string()))?;
            say!(
                "{} {} {} into {}",
                if installed.replaced {
                    "replaced"
                } else {
                    "installed"
                },
                installed.name,
                installed.version,
                installed.dir.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        PluginsCommand::Reload { name } => reload(cli, name),
        PluginsCommand::Enable { name } => set_enabled(cli, name, true),
        PluginsCommand::Disable { name } => set_enabled(cli, name, false),
    }
}

fn print_json(value: &serde_json::Value) -> Result<(), CliError> {
    let text = serde_json::to_string_pretty(value).map_err(|e| CliError::Input(e.to_string()))?;
    say!("{text}");
    Ok(())
}

/// Records sorted by name, then source order.
fn sorted(host: &Toolhost) -> Vec<PluginRecord> {
    let mut records = host.plugins.records();
    records.sort_by(|a, b| a.name.cmp(&b.name).then(a.source.cmp(&b.source)));
    records
}

/// `process pid 123, 1 restart, 1 crash` for a process plugin.
fn process_line(record: &PluginRecord) -> String {
    let pid = record
        .pid
        .map_or_else(|| "not running".to_string(), |p| format!("pid {p}"));
    format!(
        "process {pid}, {} restarts, {} crashes",
        record.restarts, record.crashes
    )
}

fn list(host: &Toolhost, as_json: bool) -> Result<ExitCode, CliError> {
    let records = sorted(host);
    if as_json {
        let value = serde_json::to_value(&records).map_err(|e| CliError::Input(e.to_string()))?;
        print_json(&value)?;
        return Ok(ExitCode::SUCCESS);
    }
    if records.is_empty() {
        say!("no plugins found (see `toolhost plugins doctor` for where toolhost looks)");
        return Ok(ExitCode::SUCCESS);
    }
    say!(
        "{:<20} {:<9} {:<10} {:<6} {:<9} {:>5} {:>5}",
        "NAME",
        "VERSION",
        "SOURCE",
        "KIND",
        "STATUS",
        "TOOLS",
        "HOOKS"
    );
    for r in &records {
        say!(
            "{:<20} {:<9} {:<10} {:<6} {:<9} {:>5} {:>5}",
            r.name,
            r.version.as_deref().unwrap_or("-"),
            r.source,
            r.kind,
            r.status,
            r.tools.len(),
            r.hooks.len()
        );
        if let Some(reason) = &r.reason {
            say!("    {reason}");
        }
        if r.isolation == Isolation::Process && r.status == PluginStatus::Loaded {
            say!("    {}", process_line(r));
        }
        for refused in &r.refused_tools {
            say!("    tool {} refused: {}", refused.name, refused.reason);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Tool details from the registry: toolset, description, availability.
fn tool_details(host: &Toolhost, record: &PluginRecord) -> Vec<serde_json::Value> {
    record
        .tools
        .iter()
        .map(|name| match host.registry.get(name) {
            Some(entry) => {
                let availability = entry
                    .check
                    .as_ref()
                    .map(|c| c.evaluate())
                    .unwrap_or_else(tools_core::Availability::yes);
                json!({
                    "name": name,
                    "toolset": entry.toolset,
                    "description": entry.description,
                    "requires_env": entry.requires_env,
                    "parallel_safe": entry.parallel_safe(),
                    "available": availability.available,
                    "reason": availability.reason,
                })
            }
            None => json!({"name": name, "available": false, "reason": "no longer registered"}),
        })
        .collect()
}

fn info(host: &Toolhost, name: &str, as_json: bool) -> Result<ExitCode, CliError> {
    let Some(record) = host.plugins.get(name) else {
        let known: Vec<String> = sorted(host).into_iter().map(|r| r.name).collect();
        return Err(CliError::Input(format!(
            "no plugin named {name} (found: {})",
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        )));
    };
    let tools = tool_details(host, &record);
    // Running the checks may have changed the live state (a check that panicked).
    let record = host.plugins.get(name).unwrap_or(record);
    if as_json {
        let mut value =
            serde_json::to_value(&record).map_err(|e| CliError::Input(e.to_string()))?;
        value["tool_details"] = json!(tools);
        value["detail"] = json!(record.detail);
        print_json(&value)?;
        return Ok(ExitCode::SUCCESS);
    }
    let show = |label: &str, value: &str| say!("{label:<12} {value}");
    show("name:", &record.name);
    show("version:", record.version.as_deref().unwrap_or("-"));
    if let Some(d) = &record.description {
        show("description:", d);
    }
    show("source:", &record.source.to_string());
    show("kind:", &record.kind.to_string());
    show("status:", &record.status.to_string());
    if let Some(reason) = &record.reason {
        show("reason:", reason);
    }
    show("library:", &record.path.display().to_string());
    show(
        "manifest:",
        &record.manifest.as_ref().map_or_else(
            || match record.kind {
                PluginKind::Python => "(pip package: the entry point)".into(),
                PluginKind::Native => "(embedded in the library)".into(),
            },
            |p| p.display().to_string(),
        ),
    );
    let api = match (&record.api, &record.built_for) {
        (Some(api), Some(built)) => format!("{api} (built for {built})"),
        (Some(api), None) => api.clone(),
        _ => "-".into(),
    };
    show("api:", &api);
    if !record.overrides.is_empty() {
        show("overrides:", &record.overrides.join(", "));
    }
    for tool in &tools {
        let name = tool["name"].as_str().unwrap_or_default();
        let state = if tool["available"] == true {
            "available".to_string()
        } else {
            format!("unavailable: {}", tool["reason"].as_str().unwrap_or("?"))
        };
        show(
            "tool:",
            &format!(
                "{name} [{}] {state}",
                tool["toolset"].as_str().unwrap_or("")
            ),
        );
    }
    for refused in &record.refused_tools {
        show("refused:", &format!("{}: {}", refused.name, refused.reason));
    }
    show(
        "hooks:",
        &if record.hooks.is_empty() {
            "-".into()
        } else {
            record.hooks.join(", ")
        },
    );
    show("panics:", &record.panics.to_string());
    show("isolation:", &record.isolation.to_string());
    if record.isolation == Isolation::Process {
        show("process:", &process_line(&record));
    }
    for warning in &record.warnings {
        show("warning:", warning);
    }
    for what in &record.unsupported {
        show("unsupported:", what);
    }
    if let Some(detail) = record
        .detail
        .as_ref()
        .filter(|d| Some(*d) != record.reason.as_ref())
    {
        say!("\n{detail}");
    }
    Ok(ExitCode::SUCCESS)
}

fn reload(cli: &Cli, name: &str) -> Result<ExitCode, CliError> {
    let home = cli.home()?;
    let asked = crate::plugins::control::request_reload(&home, name);
    if asked > 0 {
        say!("asked {asked} running host(s) to reload {name} (their logs say how it went)");
        return Ok(ExitCode::SUCCESS);
    }
    let host = cli.start_quiet()?;
    let record = host
        .plugins
        .reload(name, &host.registry, &host.hooks)
        .map_err(|e| CliError::Input(e.to_string()))?;
    say!(
        "no running host; {name} reloads: pid {}, tools: {}",
        record.pid.map_or_else(|| "-".into(), |p| p.to_string()),
        if record.tools.is_empty() {
            "-".into()
        } else {
            record.tools.join(", ")
        }
    );
    Ok(ExitCode::SUCCESS)
}

fn doctor(host: &Toolhost) -> Result<ExitCode, CliError> {
    say!(
        "toolhost {} — plugin-api {} (accepts plugins built for {}), abi_stable {}.{}",
        env!("CARGO_PKG_VERSION"),
        host_api_version(),
        host_api_requirement(),
        abi_stable::library::AbiHeader::VALUE.abi_major,
        abi_stable::library::AbiHeader::VALUE.abi_minor,
    );
    say!("\nsearched (later wins on a name collision):");
    let roots: &Roots = host.plugins.roots();
    for (source, dir) in roots.directories() {
        let state = if dir.is_dir() { "" } else { "  (missing)" };
        say!("  {:<10} {}{state}", source.to_string(), dir.display());
    }
    if let Some(dir) = &roots.project_off {
        say!(
            "  {:<10} {}  (off: set {}=1 or plugins.project = true)",
            "project",
            dir.display(),
            discovery::PROJECT_ENV
        );
    }
    let records = sorted(host);
    say!("\nplugins:");
    if records.is_empty() {
        say!("  none found");
    }
    let mut failed = 0;
    for r in &records {
        let mark = match r.status {
            PluginStatus::Loaded => "ok  ",
            PluginStatus::Disabled => "off ",
            PluginStatus::Failed => {
                failed += 1;
                "FAIL"
            }
        };
        say!("  {mark} {} ({}, {})", r.name, r.source, r.path.display());
        match r.status {
            PluginStatus::Loaded => say!(
                "       {} tools, hooks: {}",
                r.tools.len(),
                if r.hooks.is_empty() {
                    "-".into()
                } else {
                    r.hooks.join(", ")
                }
            ),
            _ => {
                let text = r.detail.as_deref().or(r.reason.as_deref()).unwrap_or("");
                for line in text.lines() {
                    say!("       {line}");
                }
            }
        }
        for refused in &r.refused_tools {
            say!("       tool {} refused: {}", refused.name, refused.reason);
        }
        for warning in &r.warnings {
            say!("       warning: {warning}");
        }
    }
    let loaded = records
        .iter()
        .filter(|r| r.status == PluginStatus::Loaded)
        .count();
    say!(
        "\n{loaded} loaded, {} disabled, {failed} failed",
        records.len() - loaded - failed
    );
    Ok(if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn new(
    name: &str,
    parent: Option<&std::path::Path>,
    api_path: Option<PathBuf>,
    api_version: Option<String>,
) -> Result<ExitCode, CliError> {
    let api = match (api_path, api_version) {
        (Some(path), _) => ApiSource::Path(path),
        (None, Some(version)) => ApiSource::Version(version),
        (None, None) => ApiSource::default_for_host(),
    };
    let parent = parent.map_or_else(|| PathBuf::from("."), std::path::Path::to_path_buf);
    let dir = create(name, &parent, &api).map_err(|e| CliError::Input(e.to_string()))?;
    say!("created {}", dir.display());
    say!("next: toolhost plugins install {}", dir.display());
    Ok(ExitCode::SUCCESS)
}

fn set_enabled(cli: &Cli, name: &str, enable: bool) -> Result<ExitCode, CliError> {
    let home = cli.home()?;
    let loaded = cli.load_config(&home)?;
    let roots = Roots::from_process(&home, &loaded.config.plugins);
    let mut known: Vec<String> = discovery::scan(&roots)
        .into_iter()
        .map(|(source, location, off)| discovery::inspect(source, &location, off).name)
        .collect();
    let python = &loaded.config.plugins.python;
    if !known.iter().any(|n| n == name)
        && !python.no_entry_points
        && let Some(interpreter) = python.resolve_interpreter(home.root())
    {
        // pip-installed Hermes plugins (their entry points name them).
        match crate::plugins::python::shim::list_entry_points(&interpreter) {
            Ok(eps) => known.extend(eps.into_iter().map(|ep| ep.name)),
            Err(e) => tracing::warn!("{e}"),
        }
    }
    if !known.iter().any(|n| n == name) {
        return Err(CliError::Input(format!(
            "no plugin named {name} was found (found: {})",
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        )));
    }
    let path = loaded.path.unwrap_or_else(|| match &cli.config {
        Some(explicit) => explicit.clone(),
        None => home.config_file(),
    });
    let edit = |result: Result<bool, config_edit::ConfigEditError>| {
        result.map_err(|e| CliError::Input(e.to_string()))
    };
    let (add, remove) = if enable {
        (["plugins", "enabled"], ["plugins", "disabled"])
    } else {
        (["plugins", "disabled"], ["plugins", "enabled"])
    };
    let removed = edit(config_edit::remove_from_array(&path, &remove, name))?;
    let added = edit(config_edit::add_to_array(&path, &add, name))?;
    let verb = if enable { "enabled" } else { "disabled" };
    if added || removed {
        say!("{verb} {name} ({})", path.display());
    } else {
        say!("{name} was already {verb} ({})", path.display());
    }
    Ok(ExitCode::SUCCESS)
}
