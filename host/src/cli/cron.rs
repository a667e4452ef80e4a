//! `toolhost cron tick|daemon|runs|list`: the scheduler for jobs made with the
//! `cronjob` tool.
//!
//! - `tick` runs every due job once and exits (for system cron or a systemd timer);
//! - `daemon` ticks every `[cron] tick_interval` seconds until SIGINT / SIGTERM;
//! - `runs JOB` shows a job's run history (newest first; `--full` adds the output
//!   document, `--json` prints the records);
//! - `list` shows the jobs.
//!
//! Runs are non-interactive: nobody answers approvals (`[approvals] no_human`
//! decides, deny by default). `--now` (hidden) fixes the clock, for tests.
//! Exit codes: 0 done (a failed job is reported, not an exit code), 2 bad usage or the
//! store could not be used.

use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};
use jiff::Timestamp;
use serde_json::json;
use tools_core::approval::Surfaces;

use super::{Cli, CliError};
use crate::app::{StartOptions, Toolhost};
use crate::cron::{TickReport, tick};

/// Arguments of `toolhost cron`.
#[derive(Debug, Args)]
pub struct CronArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: CronCommand,
}

/// `toolhost cron` subcommands.
#[derive(Debug, Subcommand)]
pub enum CronCommand {
    /// Run every due job once, then exit.
    Tick(TickArgs),
    /// Run due jobs every `[cron] tick_interval` seconds until stopped.
    Daemon(DaemonArgs),
    /// Show a job's runs, newest first.
    Runs(RunsArgs),
    /// List the jobs.
    List(ListArgs),
}

/// `tick`.
#[derive(Debug, Args)]
pub struct TickArgs {
    /// Pretend it is this time (RFC 3339), for tests.
    #[arg(long, hide = true)]
    pub now: Option<Timestamp>,
    /// Print a JSON report.
    #[arg(long)]
    pub json: bool,
}

/// `daemon`.
#[derive(Debug, Args)]
pub struct DaemonArgs {
    /// Seconds between ticks (default `[cron] tick_interval`).
    #[arg(long, value_name = "SECS")]
    pub interval: Option<f64>,
}

/// `runs`.
#[derive(Debug, Args)]
pub struct RunsArgs {
    /// Job id or name.
    pub job: String,
    /// At most this many runs.
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    /// Include each run's whole output document.
    #[arg(long)]
    pub full: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

fn start(cli: &Cli) -> Result<Toolhost, CliError> {
    let host = Toolhost::start(&StartOptions {
        home: cli.home.clone(),
        config: cli.config.clone(),
        approval_surfaces: Surfaces::none(),
        ..StartOptions::default()
    })?;
    for failure in host.plugins.failures() {
        eprintln!("toolhost: {}", failure.failure_line());
    }
    Ok(host)
}

fn store_error(e: impl std::fmt::Display) -> CliError {
    CliError::Input(e.to_string())
}

/// Run `toolhost cron`.
pub fn run(cli: &Cli, args: &CronArgs) -> Result<ExitCode, CliError> {
    match &args.command {
        CronCommand::Tick(a) => run_tick(cli, a),
        CronCommand::Daemon(a) => run_daemon(cli, a),
        CronCommand::Runs(a) => run_runs(cli, a),
        CronCommand::List(a) => run_list(cli, a),
    }
}

fn report_lines(report: &TickReport) {
    if report.locked_out {
        eprintln!("toolhost: another cron tick is running; nothing done");
        return;
    }
    for (job, result) in &report.ran {
        let status = match (result.success, result.silent) {
            (false, _) => "error",
            (true, true) => "silent",
            (true, false) => "ok",
        };
        let detail = result
            .error
            .as_deref()
            .or(result.delivery_error.as_deref())
            .map(|e| format!(": {e}"))
            .unwrap_or_default();
        println!("{} {} {status}{detail}", job.id, job.name);
    }
}

fn run_tick(cli: &Cli, args: &TickArgs) -> Result<ExitCode, CliError> {
    let host = start(cli)?;
    let fixed = args.now;
    let clock = move || fixed.unwrap_or_else(Timestamp::now);
    let report = tick(&host.services, &clock).map_err(store_error);
    host.shutdown();
    let report = report?;
    if args.json {
        let ran: Vec<_> = report
            .ran
            .iter()
            .map(|(job, r)| {
                json!({
                    "job_id": job.id, "name": job.name, "success": r.success,
                    "silent": r.silent, "error": r.error, "delivered": r.delivered,
                    "delivery_error": r.delivery_error, "session_id": r.session_id,
                })
            })
            .collect();
        println!("{}", json!({"locked_out": report.locked_out, "ran": ran}));
    } else {
        report_lines(&report);
    }
    Ok(ExitCode::SUCCESS)
}

fn run_daemon(cli: &Cli, args: &DaemonArgs) -> Result<ExitCode, CliError> {
    let host = start(cli)?;
    let interval = args
        .interval
        .unwrap_or(host.services.cron.settings.tick_interval as f64)
        .max(0.05);
    let runtime = tools_core::bridge::shared_runtime().map_err(store_error)?;
    let stop = tokio_util::sync::CancellationToken::new();
    let watcher = {
        let stop = stop.clone();
        runtime.spawn(async move {
            let _claim =
                crate::mcp::signals::claim(crate::mcp::signals::Handled::InterruptAndTerminate);
            let mut term =
                match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                    Ok(s) => s,
                    Err(_) => return,
                };
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            stop.cancel();
        })
    };
    eprintln!("toolhost: cron daemon running (tick every {interval}s)");
    let clock = Timestamp::now;
    let mut outcome = Ok(ExitCode::SUCCESS);
    while !stop.is_cancelled() {
        match tick(&host.services, &clock) {
            Ok(report) => report_lines(&report),
            Err(e) => {
                outcome = Err(store_error(e));
                break;
            }
        }
        let stop = stop.clone();
        runtime.block_on(async move {
            tokio::select! {
                _ = stop.cancelled() => {}
                _ = tokio::time::sleep(Duration::from_secs_f64(interval)) => {}
            }
        });
    }
    watcher.abort();
    host.shutdown();
    eprintln!("toolhost: cron daemon stopped");
    outcome
}

fn run_runs(cli: &Cli, args: &RunsArgs) -> Result<ExitCode, CliError> {
    let host = start(cli)?;
    let store = host.services.cron.store().map_err(store_error)?;
    let jobs = store.list().map_err(store_error)?;
    let lower = args.job.to_lowercase();
    let named: Vec<_> = jobs
        .iter()
        .filter(|j| j.name.to_lowercase() == lower)
        .collect();
    let id = match (jobs.iter().find(|j| j.id == args.job), named.as_slice()) {
        (Some(j), _) => j.id.clone(),
        (None, [one]) => one.id.clone(),
        (None, []) => args.job.clone(),
        (None, many) => {
            let ids: Vec<&str> = many.iter().map(|j| j.id.as_str()).collect();
            return Err(CliError::Input(format!(
                "job name '{}' is ambiguous: {}",
                args.job,
                ids.join(", ")
            )));
        }
    };
    let runs = store.runs(&id, args.limit).map_err(store_error)?;
    host.shutdown();
    if runs.is_empty() && !jobs.iter().any(|j| j.id == id) {
        return Err(CliError::Input(format!(
            "no job or run history for '{}'; `toolhost cron list` lists the jobs",
            args.job
        )));
    }
    if args.json {
        println!("{}", json!(runs));
        return Ok(ExitCode::SUCCESS);
    }
    if runs.is_empty() {
        println!("no runs yet");
    }
    for run in &runs {
        let finished = run.finished_at.as_deref().unwrap_or("-");
        println!(
            "#{} {} → {} {}",
            run.id, run.started_at, finished, run.status
        );
        if let Some(e) = &run.error {
            println!("  error: {e}");
        }
        if let Some(e) = &run.delivery_error {
            println!("  delivery error: {e}");
        }
        let body = if args.full {
            &run.output
        } else {
            &run.response
        };
        if let Some(text) = body.as_deref().filter(|t| !t.is_empty()) {
            println!("{}\n", text.trim_end());
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn run_list(cli: &Cli, args: &ListArgs) -> Result<ExitCode, CliError> {
    let host = start(cli)?;
    let store = host.services.cron.store().map_err(store_error)?;
    let jobs = store.list().map_err(store_error)?;
    host.shutdown();
    if args.json {
        let list: Vec<_> = jobs.iter().map(|j| j.summary()).collect();
        println!("{}", json!(list));
        return Ok(ExitCode::SUCCESS);
    }
    for job in &jobs {
        println!(
            "{}  {:<30}  {:<16}  {:<10}  next {}",
            job.id,
            job.name,
            job.schedule_display,
            job.state,
            job.next_run_at.as_deref().unwrap_or("-")
        );
    }
    Ok(ExitCode::SUCCESS)
}
