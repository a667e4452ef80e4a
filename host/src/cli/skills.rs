//! `toolhost skills`: the skills the agent sees, and the guard on the command line.
//!
//! - `skills list [--json]`: every visible skill — name, source, category,
//!   description — then the ones hidden by a later source's skill of the same name;
//!   `--json`: `[{"name","description","category","source","path","shadowed"}]`.
//! - `skills view NAME [FILE] [--json]`: the skill's `SKILL.md` (or a linked file);
//!   `--json` prints the `skill_view` tool result. Exit 1 when not found.
//! - `skills check PATH [--json]`: scan a skill folder with the guard; exit 1 when a
//!   finding blocks it.
//! - `skills install PATH [--replace] [--force]`: validate, scan and copy a skill folder
//!   into `<home>/skills`; a blocked skill is refused (exit 1) unless `--force`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::{Value, json};
use tools_core::skills::install::{self, InstallError, InstallOptions};
use tools_core::skills::{SkillCatalog, SkillEntry, view};

use super::{Cli, CliError};

/// Arguments of `toolhost skills`.
#[derive(Debug, Args)]
pub struct SkillsArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: SkillsCommand,
}

/// `toolhost skills` subcommands.
#[derive(Debug, Subcommand)]
pub enum SkillsCommand {
    /// List every skill the agent can see.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print a skill's SKILL.md, or one of its files.
    View {
        /// Skill name (or path inside a skills folder).
        name: String,
        /// A file inside the skill, e.g. references/api.md.
        file: Option<String>,
        /// Print the skill_view tool result.
        #[arg(long)]
        json: bool,
    },
    /// Scan a skill folder with the guard.
    Check {
        /// The skill folder.
        path: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Install a skill folder into <home>/skills.
    Install {
        /// The skill folder.
        path: PathBuf,
        /// Overwrite an installed skill of the same name.
        #[arg(long)]
        replace: bool,
        /// Install even when the guard blocks it.
        #[arg(long)]
        force: bool,
    },
}

fn io_error(what: &str) -> impl FnOnce(std::io::Error) -> CliError + '_ {
    move |source| CliError::Io {
        what: what.to_string(),
        source,
    }
}

fn catalog(cli: &Cli) -> Result<(SkillCatalog, PathBuf), CliError> {
    let home = cli.home()?;
    let config = cli.load_config(&home)?;
    let cwd = std::env::current_dir().map_err(io_error("current directory"))?;
    let skills_dir = home.skills_dir();
    Ok((
        SkillCatalog::from_settings(skills_dir.clone(), &config.config.skills, &cwd),
        skills_dir,
    ))
}

fn entry_json(entry: &SkillEntry, shadowed: bool) -> Value {
    json!({
        "name": entry.name,
        "description": entry.description,
        "category": entry.category,
        "source": entry.source.as_str(),
        "path": entry.dir().map(|d| d.display().to_string()),
        "shadowed": shadowed,
    })
}

/// Run `toolhost skills ...`.
pub fn run(cli: &Cli, args: &SkillsArgs) -> Result<ExitCode, CliError> {
    let mut out = std::io::stdout().lock();
    let write_err = io_error("stdout");
    match &args.command {
        SkillsCommand::List { json } => {
            let (catalog, _) = catalog(cli)?;
            let skills = catalog.skills();
            let shadowed = catalog.shadowed();
            let text = if *json {
                let all: Vec<Value> = skills
                    .iter()
                    .map(|s| entry_json(s, false))
                    .chain(shadowed.iter().map(|s| entry_json(s, true)))
                    .collect();
                format!("{}\n", Value::Array(all))
            } else {
                let mut text = String::new();
                for s in skills.iter() {
                    let category = s.category.as_deref().unwrap_or("-");
                    let description: String = s.description.chars().take(80).collect();
                    text.push_str(&format!(
                        "{:<28} {:<8} {:<14} {description}\n",
                        s.name,
                        s.source.as_str(),
                        category
                    ));
                }
                for s in shadowed.iter() {
                    let at = s.dir().map(|d| d.display().to_string()).unwrap_or_default();
                    text.push_str(&format!(
                        "{:<28} {:<8} (shadowed) {at}\n",
                        s.name,
                        s.source.as_str()
                    ));
                }
                text
            };
            out.write_all(text.as_bytes()).map_err(write_err)?;
            Ok(ExitCode::SUCCESS)
        }
        SkillsCommand::View { name, file, json } => {
            let (catalog, _) = catalog(cli)?;
            let result = view::view(&catalog, name, file.as_deref());
            let ok = result["success"] == true;
            let text = if *json || !ok {
                format!("{result}\n")
            } else {
                result["content"].as_str().unwrap_or_default().to_string()
            };
            if ok {
                out.write_all(text.as_bytes()).map_err(write_err)?;
                Ok(ExitCode::SUCCESS)
            } else {
                eprint!("{text}");
                Ok(ExitCode::from(1))
            }
        }
        SkillsCommand::Check { path, json } => {
            let (_, report) =
                install::check(path).map_err(|err| CliError::Input(err.to_string()))?;
            let text = if *json {
                format!("{}\n", report.to_json())
            } else {
                format!("{}\n", report.format())
            };
            out.write_all(text.as_bytes()).map_err(write_err)?;
            Ok(if report.blocked() {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        SkillsCommand::Install {
            path,
            replace,
            force,
        } => {
            let (_, skills_dir) = catalog(cli)?;
            let options = InstallOptions {
                replace: *replace,
                force: *force,
            };
            match install::install(path, &skills_dir, options) {
                Ok(done) => {
                    let mut text = format!("installed {} into {}\n", done.name, done.dir.display());
                    if !done.report.findings.is_empty() {
                        text.push_str(&done.report.format());
                        text.push('\n');
                    }
                    out.write_all(text.as_bytes()).map_err(write_err)?;
                    Ok(ExitCode::SUCCESS)
                }
                Err(err @ (InstallError::Blocked(_) | InstallError::Exists(_))) => {
                    eprintln!("toolhost: {err}");
                    Ok(ExitCode::from(1))
                }
                Err(err) => Err(CliError::Input(err.to_string())),
            }
        }
    }
}
