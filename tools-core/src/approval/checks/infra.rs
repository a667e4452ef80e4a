//! Containers, clusters and infrastructure: container lifecycle and removal, prunes,
//! privileged/host-root containers, `kubectl delete`, `helm uninstall`, `terraform destroy`.

use super::super::analyze::Analyzer;
use super::super::model::{Arg, Source};
use super::super::options::{self, OptSpec};
use super::super::paths::{PathClass, classify};
use super::super::rules;
use super::run as run_payload;

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
        "run" | "create" => {
            run(az, after);
            container_payload(az, after, &DOCKER_RUN);
        }
        "exec" => container_payload(az, after, &DOCKER_EXEC),
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
                "run" | "create" if sub == "container" => {
                    run(az, inner_args);
                    container_payload(az, inner_args, &DOCKER_RUN);
                }
                "exec" if sub == "container" => container_payload(az, inner_args, &DOCKER_EXEC),
                _ => {}
            }
        }
        "volume-prune" | "prune" => az.flag_rule(&rules::CONTAINER_REMOVE),
        _ => {}
    }
}

/// `docker run` with `--privileged`, the host's PID/IPC/user namespace, broad
/// capabilities, or a host mount of the root, a system path, a home, a credential store
/// or the Docker socket.
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
            _ => w
                .strip_prefix("--volume=")
                .or_else(|| w.strip_prefix("-v"))
                .or_else(|| {
                    w.strip_prefix("--mount=").and_then(|m| {
                        m.split(',').find_map(|kv| {
                            kv.strip_prefix("source=")
                                .or_else(|| kv.strip_prefix("src="))
                        })
                    })
                }),
        };
        let host_path = mount.is_some_and(|m| {
            let source = m.split(':').next().unwrap_or(m);
            source.ends_with("docker.sock")
                || matches!(
                    classify(source, a.dynamic),
                    PathClass::Root
                        | PathClass::SystemDir
                        | PathClass::SystemFile
                        | PathClass::Home
                        | PathClass::RawDevice
                        | PathClass::Sensitive
                        | PathClass::AgentConfig
                        | PathClass::Sysrq
                )
        });
        let namespace = |flag: &str| {
            (prev == flag && w == "host") || w.strip_prefix(flag).is_some_and(|r| r == "=host")
        };
        let caps = (prev == "--cap-add"
            && matches!(
                w.to_ascii_uppercase().as_str(),
                "ALL" | "SYS_ADMIN" | "SYS_MODULE" | "SYS_PTRACE" | "SYS_RAWIO"
            ))
            || w.strip_prefix("--cap-add=").is_some_and(|c| {
                matches!(
                    c.to_ascii_uppercase().as_str(),
                    "ALL" | "SYS_ADMIN" | "SYS_MODULE" | "SYS_PTRACE" | "SYS_RAWIO"
                )
            });
        if w == "--privileged"
            || w == "--privileged=true"
            || host_path
            || namespace("--pid")
            || namespace("--ipc")
            || namespace("--userns")
            || namespace("--uts")
            || caps
            || w.starts_with("--device=/dev/sd")
            || (prev == "--device" && w.starts_with("/dev/sd"))
        {
            az.flag_rule(&rules::CONTAINER_HOST);
        }
        prev = w;
    }
}

/// Options of `docker run`/`create` that take a value (so the image is found after them).
const DOCKER_RUN: OptSpec = OptSpec {
    short_with_value: "vepwuhmclLa",
    long_with_value: &[
        "volume",
        "env",
        "publish",
        "workdir",
        "user",
        "hostname",
        "memory",
        "cpu-shares",
        "label",
        "name",
        "entrypoint",
        "network",
        "net",
        "mount",
        "env-file",
        "label-file",
        "add-host",
        "device",
        "cpus",
        "restart",
        "platform",
        "pull",
        "log-driver",
        "log-opt",
        "security-opt",
        "cap-add",
        "cap-drop",
        "ulimit",
        "tmpfs",
        "shm-size",
        "runtime",
        "ipc",
        "pid",
        "uts",
        "userns",
        "gpus",
        "dns",
        "dns-search",
        "dns-option",
        "link",
        "volumes-from",
        "stop-signal",
        "stop-timeout",
        "health-cmd",
        "health-interval",
        "health-retries",
        "health-timeout",
        "health-start-period",
        "cidfile",
        "cgroupns",
        "cgroup-parent",
        "expose",
        "isolation",
        "memory-swap",
        "memory-reservation",
        "pids-limit",
        "group-add",
        "attach",
        "detach-keys",
        "ip",
        "ip6",
        "mac-address",
        "network-alias",
        "storage-opt",
        "sysctl",
        "volume-driver",
        "kernel-memory",
        "cpuset-cpus",
        "cpuset-mems",
        "blkio-weight",
        "device-read-bps",
        "oom-score-adj",
    ],
    stop_at_operand: true,
};

/// Options of `docker exec` that take a value.
const DOCKER_EXEC: OptSpec = OptSpec {
    short_with_value: "euw",
    long_with_value: &["env", "env-file", "user", "workdir", "detach-keys"],
    stop_at_operand: true,
};

/// The command a container runs (`docker exec C CMD...`, `docker run IMAGE CMD...`,
/// `--entrypoint`), analysed like a local one: the floor holds inside containers too.
fn container_payload(az: &mut Analyzer, args: &[Arg<'_>], spec: &OptSpec) {
    let items = options::parse(args, spec);
    let entrypoint = items.iter().find_map(|i| match i {
        options::Item::Long("entrypoint", Some(e)) => Some(*e),
        _ => None,
    });
    let health = items.iter().find_map(|i| match i {
        options::Item::Long("health-cmd", Some(e)) => Some(*e),
        _ => None,
    });
    if let Some(health) = health {
        az.script(health);
    }
    let Some(target) = options::first_operand(&items) else {
        return;
    };
    let mut payload: Vec<Arg<'_>> = Vec::new();
    if let Some(e) = entrypoint {
        payload.push(Arg::literal(e.to_string()));
    }
    payload.extend(args[target + 1..].iter().cloned());
    if !payload.is_empty() {
        run_payload(az, &payload, &Source::Plain);
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
    let ws = words(&args[1..], &spec);
    let Some(&(index, verb)) = ws.first() else {
        return;
    };
    let rest = &args[index + 2..];
    let dry = rest
        .iter()
        .any(|a| a.as_str().starts_with("--dry-run") && a.as_str() != "--dry-run=none");
    match verb {
        "delete" if !dry => az.flag_rule(&rules::KUBECTL_DELETE),
        "drain" if !dry => az.flag_rule(&rules::KUBECTL_DISRUPT),
        "scale" if !dry => {
            let mut prev = "";
            for a in rest {
                let w = a.as_str();
                let n = w.strip_prefix("--replicas=").or(if prev == "--replicas" {
                    Some(w)
                } else {
                    None
                });
                if n == Some("0") {
                    az.flag_rule(&rules::KUBECTL_DISRUPT);
                }
                prev = w;
            }
        }
        "exec" | "debug" => {
            // `kubectl exec POD -- CMD...`: the payload runs in the pod.
            if let Some(dd) = rest.iter().position(|a| a.as_str() == "--")
                && dd + 1 < rest.len()
            {
                run_payload(az, &rest[dd + 1..], &Source::Plain);
            }
        }
        _ => {}
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
        return;
    }
    let unreviewed = words.iter().any(|w| {
        matches!(
            *w,
            "-auto-approve"
                | "--auto-approve"
                | "-auto-approve=true"
                | "--yes"
                | "-y"
                | "-f"
                | "--force"
        ) || w.starts_with("-replace")
            || w.starts_with("--replace")
            || w.starts_with("--target-replace")
    });
    if unreviewed && matches!(sub, Some("apply" | "up" | "update" | "import" | "refresh")) {
        az.flag_rule(&rules::INFRA_APPLY);
    }
}
