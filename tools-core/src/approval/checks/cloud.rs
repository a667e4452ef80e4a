//! Cloud command-line clients that destroy resources or data: `aws ... delete-*` /
//! `terminate-instances` / `s3 rm --recursive` / `s3 rb` / `s3 sync --delete`, `gcloud ...
//! delete`, `az ... delete`, `gsutil rm -r` / `rb` / `rsync -d`, `gcloud storage rm -r`.
//! Reads (`describe`, `list`, `ls`, `get`) and `--dry-run` are not flagged.

use super::super::analyze::Analyzer;
use super::super::model::Arg;
use super::super::rules;

fn words<'s>(args: &'s [Arg<'_>]) -> Vec<&'s str> {
    args[1..].iter().map(|a| a.as_str()).collect()
}

fn has(words: &[&str], flags: &[&str]) -> bool {
    words.iter().any(|w| {
        flags
            .iter()
            .any(|f| w == f || w.strip_prefix(f).is_some_and(|r| r.starts_with('=')))
    })
}

/// Verbs that destroy a resource.
fn destroys(verb: &str) -> bool {
    verb.starts_with("delete")
        || verb.starts_with("terminate")
        || verb.starts_with("remove")
        || verb.starts_with("purge")
        || verb.starts_with("destroy")
        || verb.starts_with("deregister")
        || matches!(verb, "rb" | "rm" | "stop-instances" | "stop" | "reset")
}

/// `aws`, `gcloud`, `az`, `gsutil`, `doctl`, `hcloud`, `s3cmd`, `rclone`.
pub(crate) fn cli(az: &mut Analyzer, name: &str, args: &[Arg<'_>]) {
    let words = words(args);
    if has(&words, &["--dry-run", "--dryrun", "--help", "-h"]) || words.contains(&"help") {
        return;
    }
    let operands: Vec<&str> = words
        .iter()
        .copied()
        .filter(|w| !w.starts_with('-'))
        .collect();
    let recursive = has(&words, &["-r", "-R", "--recursive", "-rf", "-fr"]);
    let flagged = match name {
        "aws" => match operands.as_slice() {
            ["s3", "rm", ..] => recursive,
            ["s3", "rb", ..] => true,
            ["s3", "sync", ..] | ["s3", "mv", ..] => {
                has(&words, &["--delete"]) || operands[1] == "mv" && recursive
            }
            [_, verb, ..] => destroys(verb) && *verb != "rm",
            _ => false,
        },
        "gsutil" => match operands.as_slice() {
            ["rm", ..] => {
                recursive
                    || operands
                        .iter()
                        .any(|w| w.ends_with("/**") || w.ends_with("/*"))
            }
            ["rb", ..] => true,
            ["rsync", ..] => {
                has(&words, &["-d"])
                    || words
                        .iter()
                        .any(|w| w.starts_with('-') && !w.starts_with("--") && w.contains('d'))
            }
            _ => false,
        },
        "s3cmd" => {
            matches!(operands.first(), Some(&"rb" | &"del" | &"rm"))
                && (recursive || operands.first() == Some(&"rb"))
                || (operands.first() == Some(&"sync") && has(&words, &["--delete-removed"]))
        }
        "rclone" => {
            matches!(operands.first(), Some(&"purge" | &"delete" | &"rmdirs"))
                || (operands.first() == Some(&"sync"))
        }
        // `gcloud [group...] VERB`, `az [group...] VERB`: a destroying verb anywhere among
        // the command words (before arguments such as names).
        _ => {
            if name == "gcloud"
                && operands.first() == Some(&"storage")
                && operands.get(1) == Some(&"rm")
            {
                recursive || operands.iter().any(|w| w.ends_with("/**"))
            } else {
                operands
                    .iter()
                    .take(5)
                    .any(|w| destroys(w) && *w != "rm" && *w != "stop")
            }
        }
    };
    if flagged {
        az.flag_rule(&rules::CLOUD_DELETE);
    }
}
