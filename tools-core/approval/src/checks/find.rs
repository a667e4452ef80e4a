//! `find`: `-delete`, `-exec`/`-execdir`/`-ok` commands (analysed as commands, and probed
//! for destroying each file found), `-fprint` targets. A start path that is the root, a
//! system directory or a home makes deleting or overwriting what it finds hardline.

use super::super::analyze::Analyzer;
use super::super::model::{Arg, Source};
use super::super::paths::{PathClass, classify};
use super::super::rules;
use super::super::verdict::Finding;
use super::files::{Via, write_target_via};
use super::run;

/// `find`: `-delete`, `-exec`/`-execdir`/`-ok` commands (analysed as commands), `-fprint`.
pub(crate) fn find(az: &mut Analyzer, args: &[Arg<'_>], stdin: &Source) -> Source {
    let rest = &args[1..];
    // Leading options (-H -L -P -D x -Ox), then start paths, then the expression.
    let mut i = 0;
    while i < rest.len() {
        let w = rest[i].as_str();
        if matches!(w, "-H" | "-L" | "-P") || w.starts_with("-O") {
            i += 1;
        } else if w == "-D" {
            i += 2;
        } else {
            break;
        }
    }
    let start_paths: Vec<&Arg<'_>> = rest[i.min(rest.len())..]
        .iter()
        .take_while(|a| {
            let w = a.as_str();
            !(w.starts_with('-') || w == "(" || w == "!" || w == ")" || w == ",")
        })
        .collect();
    let worst_start = start_paths
        .iter()
        .map(|a| {
            let a = az.resolve(a);
            classify(a.as_str(), a.dynamic)
        })
        .find(|c| matches!(c, PathClass::Root | PathClass::SystemDir | PathClass::Home));
    let hardline = |az: &mut Analyzer| match worst_start {
        Some(PathClass::Root) => az.flag_rule(&rules::RM_ROOT),
        Some(PathClass::SystemDir) => az.flag_rule(&rules::RM_SYSTEM_DIR),
        Some(PathClass::Home) => az.flag_rule(&rules::RM_HOME),
        _ => {}
    };
    let mut j = i + start_paths.len();
    while j < rest.len() {
        let w = rest[j].as_str();
        match w {
            "-delete" => {
                az.flag_rule(&rules::FIND_DELETE);
                hardline(az);
            }
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let end = rest[j + 1..]
                    .iter()
                    .position(|a| a.as_str() == ";" || a.as_str() == "+")
                    .map_or(rest.len(), |p| j + 1 + p);
                let inner = &rest[j + 1..end];
                if let Some(first) = inner.first() {
                    let name = super::command_name(first.as_str());
                    if name == "rm" || name == "shred" || name == "unlink" {
                        az.flag_rule(&rules::FIND_EXEC_RM);
                        hardline(az);
                    }
                    for start in &start_paths {
                        let resolved = az.resolve(start);
                        let class = classify(resolved.as_str(), resolved.dynamic);
                        let found = destroys_each(inner, &resolved);
                        if found.is_empty() {
                            continue;
                        }
                        if matches!(
                            class,
                            PathClass::Root
                                | PathClass::SystemDir
                                | PathClass::Home
                                | PathClass::SystemFile
                        ) {
                            az.flag_rule(&rules::MASS_OVERWRITE);
                        }
                        for finding in found {
                            az.flag(finding);
                        }
                    }
                    run(az, inner, &Source::Plain);
                }
                j = end;
            }
            "-fprint" | "-fprint0" | "-fls" | "-fprintf" => {
                if let Some(target) = rest.get(j + 1) {
                    write_target_via(az, target, Via::Redirect);
                }
                j += 1;
            }
            _ => {}
        }
        j += 1;
    }
    if let Some(taint) = stdin.taint() {
        return taint;
    }
    match start_paths.iter().find(|a| {
        let a = az.resolve(a);
        matches!(
            classify(a.as_str(), a.dynamic),
            PathClass::Root | PathClass::SystemDir | PathClass::Home
        )
    }) {
        Some(start) => Source::Found(az.resolve(start).as_str().to_string()),
        None => Source::Produced,
    }
}

/// `find START | xargs CMD`: CMD runs on every path found under START, which is the
/// root, a system directory or a home; judged like `-exec CMD {} +`.
pub(crate) fn each_found(az: &mut Analyzer, inner: &[Arg<'_>], start: &str) {
    let mut probe_args: Vec<Arg<'_>> = inner.to_vec();
    probe_args.push(Arg::literal("{}"));
    let found = destroys_each(&probe_args, &Arg::literal(start));
    if !found.is_empty() {
        az.flag_rule(&rules::MASS_OVERWRITE);
    }
    for finding in found {
        az.flag(finding);
    }
}

/// Whether `find START ... -exec CMD {}` empties, overwrites or deletes each file it finds:
/// the command is judged on a probe with `{}` standing for START itself (`truncate -s0 /`,
/// `cp /dev/null /etc`, `sh -c ': > "$1"' _ /usr`), and any write or delete finding on it
/// counts. Returns those findings.
fn destroys_each(inner: &[Arg<'_>], start: &Arg<'_>) -> Vec<Finding> {
    let probe_args: Vec<Arg<'_>> = inner
        .iter()
        .map(|a| {
            if a.as_str().contains("{}") {
                Arg::literal(a.as_str().replace("{}", start.as_str()))
            } else {
                a.clone()
            }
        })
        .collect();
    let mut probe = Analyzer::new();
    run(&mut probe, &probe_args, &Source::Plain);
    probe.findings.retain(|f| {
        f.rule.hardline
            || [
                &rules::SYSTEM_CONFIG,
                &rules::SENSITIVE_FILE,
                &rules::RM_SYSTEM_PATH,
                &rules::DD_OVERWRITE,
                &rules::LOG_WIPE,
            ]
            .iter()
            .any(|r| std::ptr::eq(*r, f.rule))
    });
    probe.findings
}
