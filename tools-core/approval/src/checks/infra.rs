//! Containers, clusters and infrastructure: container lifecycle and removal, prunes,
//! privileged/host-root containers, `kubectl delete`, `helm uninstall`, `terraform destroy`.

use super::super::analyze::Analyzer;
use super::super::model::Arg;
use super::super::options::{self, OptSpec};
use super::super::rules;

const DOCKER_GLOBAL: OptSpec = OptSpec {
    short_with_value: "HcCl",
    long_with_value: &[
        "host",
        "context",
        "config",
        "log-level",
        "tlscacert",
        "tlscert",
        "tlskey",
        "url",
        "connection",
        "identity",
        "root",
        "runroot",
        "storage-driver",
        "cgroup-manager",
    ],
    stop_at_operand: true,
};

/// The operand words after options (`tool [opts] a b c` → `[a, b, c]`), and their indices.
fn words<'s>(args: &'s [Arg<'_>], spec: &OptSpec) -> Vec<(usize, &'s str)> {
    let items = options::parse(args, spec);
    options::operands(&items)
        .map(|i| (i, args[i].as_str()))
        .collect()
}

fn has_any(args: &[Arg<'_>], flags: &[&str]) -> bool {
    args.iter().any(|a| {
        let w = a.as_str();
        flags.contains(&w)
            || flags.iter().any(|f| {
                f.len() == 2
                    && f.starts_with('-')
                    && w.starts_with('-')
                    && !w.starts_with("--")
                    && w[1..].contains(&f[1..])
            })
    })
}

/// `docker` / `podman` / `nerdctl`.
pub(crate) fn docker(az: &mut Analyzer, args: &[Arg<'_>]) {
    let rest = &args[1..];
    let top = words(rest, &DOCKER_GLOBAL);
    let Some(&(sub_index, sub)) = top.first() else {
        return;
    };
    let after = &rest[sub_index + 1..];
    match sub {
        "compose" => compose(az, after),
        "rm" if has_any(after, &["-f", "--force", "-v", "--volumes"]) => {
            az.flag_rule(&rules::CONTAINER_REMOVE)
        }
        "rmi" if has_any(after, &["-f", "--force"]) => az.flag_rule(&rules::CONTAINER_REMOVE),
        "stop" | "kill" | "restart" => az.flag_rule(&rules::CONTAINER_LIFECYCLE),
        "run" | "create" => run(az, after),
        "container" | "image" | "volume" | "network" | "system" | "builder" | "buildx" | "pod" => {
            let inner = after.first().map(|a| a.as_str()).unwrap_or_default();
            let inner_args = after.get(1..).unwrap_or_default();
            match inner {
                "prune" => az.flag_rule(&rules::CONTAINER_REMOVE),
                "rm" | "remove"
                    if sub == "volume"
                        || sub == "network"
                        || has_any(inner_args, &["-f", "--force", "-v", "--volumes"]) =>
                {
                    az.flag_rule(&rules::CONTAINER_REMOVE)
                }
                "stop" | "kill" | "restart" if sub == "container" || sub == "pod" => {
                    az.flag_rule(&rules::CONTAINER_LIFECYCLE)
                }
                "run" | "create" if sub == "container" => run(az, inner_args),
                _ => {}
            }
        }
        "volume-prune" | "prune" => az.flag_rule(&rules::CONTAINER_REMOVE),
        _ => {}
    }
}

/// `docker run` with `--privileged` or the host root mounted (`-v /:/host`).
fn run(az: &mut Analyzer, args: &[Arg<'_>]) {
    let mut prev = "";
    for a in args {
        let w = a.as_str();
        let mount = match prev {
            "-v" | "--volume" => Some(w),
            "--mount" => w.split(',').find_map(|kv| {
                kv.strip_prefix("source=")
                    .or_else(|| kv.strip_prefix("src="))
            }),
            _ => w.strip_prefix("--volume=").or_else(|| w.strip_prefix("-v")),
        };
        let host_root = mount.is_some_and(|m| m == "/" || m.starts_with("/:"));
        if w == "--privileged" || w == "--privileged=true" || host_root {
            az.flag_rule(&rules::CONTAINER_HOST);
        }
        prev = w;
    }
}

/// `docker compose ...` / `docker-compose ...`.
pub(crate) fn compose(az: &mut Analyzer, args: &[Arg<'_>]) {
    let spec = OptSpec {
        short_with_value: "fp",
        long_with_value: &[
            "file",
            "project-name",
            "profile",
            "env-file",
            "project-directory",
            "ansi",
            "progress",
            "parallel",
        ],
        stop_at_operand: true,
    };
    let ws = words(args, &spec);
    let Some(&(i, sub)) = ws.first() else { return };
    let after = &args[i + 1..];
    match sub {
        "down" => {
            az.flag_rule(&rules::CONTAINER_LIFECYCLE);
            if has_any(after, &["-v", "--volumes", "--rmi"]) {
                az.flag_rule(&rules::CONTAINER_REMOVE);
            }
        }
        "stop" | "kill" | "restart" => az.flag_rule(&rules::CONTAINER_LIFECYCLE),
        "rm" if has_any(after, &["-f", "--force", "-v", "--volumes"]) => {
            az.flag_rule(&rules::CONTAINER_REMOVE)
        }
        _ => {}
    }
}

/// `kubectl delete ...`.
pub(crate) fn kubectl(az: &mut Analyzer, args: &[Arg<'_>]) {
    let spec = OptSpec {
        short_with_value: "ns",
        long_with_value: &[
            "namespace",
            "context",
            "kubeconfig",
            "cluster",
            "user",
            "server",
            "token",
            "as",
            "as-group",
            "certificate-authority",
            "client-certificate",
            "client-key",
            "request-timeout",
            "cache-dir",
        ],
        stop_at_operand: true,
    };
    if words(&args[1..], &spec)
        .first()
        .is_some_and(|(_, w)| *w == "delete")
    {
        az.flag_rule(&rules::KUBECTL_DELETE);
    }
}

/// `helm uninstall|delete ...`.
pub(crate) fn helm(az: &mut Analyzer, args: &[Arg<'_>]) {
    let spec = OptSpec {
        short_with_value: "n",
        long_with_value: &[
            "namespace",
            "kube-context",
            "kubeconfig",
            "registry-config",
            "repository-cache",
            "repository-config",
        ],
        stop_at_operand: true,
    };
    if words(&args[1..], &spec)
        .first()
        .is_some_and(|(_, w)| matches!(*w, "uninstall" | "delete" | "del" | "un"))
    {
        az.flag_rule(&rules::HELM_UNINSTALL);
    }
}

/// `terraform destroy`, `terraform apply -destroy`, `pulumi destroy`, `terragrunt run-all destroy`.
pub(crate) fn terraform(az: &mut Analyzer, args: &[Arg<'_>]) {
    let words: Vec<&str> = args[1..].iter().map(|a| a.as_str()).collect();
    let sub = words
        .iter()
        .find(|w| !w.starts_with('-') && !matches!(**w, "run-all" | "run"))
        .copied();
    let destroy = matches!(sub, Some("destroy") | Some("down"))
        || (sub == Some("apply") && words.iter().any(|w| matches!(*w, "-destroy" | "--destroy")));
    if destroy {
        az.flag_rule(&rules::INFRA_DESTROY);
    }
}
