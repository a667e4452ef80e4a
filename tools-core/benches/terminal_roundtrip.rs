//! `echo hi` round trip through the `terminal` tool, per backend: registry dispatch,
//! approval gate, environment lookup, shell wrapper (snapshot source, cd, run, env dump,
//! cwd report), capture, ANSI strip, redaction. The environment is warm (created before
//! measuring), as in Hermes' `hermes_terminal.py` beside this file.
//!
//! Local and sandbox run twice: with the persistent shell (the default) and with one
//! shell per command (`terminal.persistent_shell = false`, the path before it).
//!
//! Backends without their service (bwrap, `.ci/setup-terminal.sh`'s podman socket and
//! sshd, found by `toolhost_environments::ci_services`: the environment, else
//! `/tmp/toolhost-ci/env`) are skipped with a note.
//!
//! Run: `cargo bench -p tools-core --bench terminal_roundtrip`

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tools_core::environments::settings::DockerSettings;
use tools_core::environments::{BackendKind, TerminalSettings, ci_services};
use tools_core::settings::CoreSettings;
use tools_core::{CoreServices, Home, Registry, ToolContext};

fn settings_for(kind: BackendKind) -> Option<TerminalSettings> {
    let mut t = TerminalSettings {
        backend: kind,
        ..TerminalSettings::default()
    };
    match kind {
        BackendKind::Local => {}
        BackendKind::Sandbox => {
            tools_core::environments::sandbox::availability(&t.sandbox).ok()?;
            t.sandbox.workdir = std::env::temp_dir().display().to_string();
        }
        BackendKind::Docker => {
            t.docker = DockerSettings {
                network: false,
                ..ci_services::docker()?
            };
            tools_core::environments::docker::availability(&t.docker).ok()?;
        }
        BackendKind::Ssh => {
            t.ssh = ci_services::ssh()?;
        }
        _ => return None,
    }
    Some(t)
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("terminal_echo_hi");
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(8));
    for (kind, persistent) in [
        (BackendKind::Local, true),
        (BackendKind::Local, false),
        (BackendKind::Sandbox, true),
        (BackendKind::Sandbox, false),
        (BackendKind::Docker, true),
        (BackendKind::Ssh, true),
    ] {
        let Some(mut terminal) = settings_for(kind) else {
            eprintln!("skipping {kind}: its service is not set up (.ci/setup-terminal.sh)");
            continue;
        };
        terminal.persistent_shell = persistent;
        let name = if persistent {
            kind.name().to_string()
        } else {
            format!("{kind}_one_shell_per_command")
        };
        let Ok(home) = tempfile::tempdir() else {
            eprintln!("skipping {kind}: no temporary directory");
            continue;
        };
        let services = Arc::new(CoreServices::new(
            Home::at(home.path()),
            CoreSettings {
                terminal,
                ..CoreSettings::default()
            },
            Arc::new(tools_core::Hooks::new()),
            Arc::new(tools_core::approval::AllowAllGate),
        ));
        let registry = Registry::new();
        tools_core::tools::register_core_tools(&registry, &services);
        let ctx = ToolContext::for_task("bench");
        let args = json!({"command": "echo hi"});
        let first = registry.dispatch_blocking("terminal", args.clone(), &ctx);
        assert!(
            first.text.contains("\"output\":\"hi\""),
            "{kind}: {}",
            first.text
        );
        group.bench_function(name, |b| {
            b.iter(|| registry.dispatch_blocking("terminal", args.clone(), &ctx))
        });
        services.shutdown();
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
