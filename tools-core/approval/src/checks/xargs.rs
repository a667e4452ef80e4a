//! `xargs CMD` fed by a known stream: literal text (`xargs rm -rf <<< /`, `-0`, `-d`,
//! `-I{} sh -c '{}'`), a listing of every process (`ps -e -o pid= | xargs kill`), the
//! paths under a system tree (`find / | xargs truncate -s0`), or pids looked up by a
//! pipeline (`... | grep x | awk ... | xargs kill`).

use super::super::analyze::Analyzer;
use super::super::model::{Arg, Source, command_name};
use super::super::rules;
use super::{find, run};

/// `args[0]` is `xargs`, the command starts at `args[i]`. Returns the output when the
/// whole command was analysed here, `None` when the caller goes on with `args[i..]`.
pub(crate) fn input(
    az: &mut Analyzer,
    args: &[Arg<'_>],
    i: usize,
    stdin: &Source,
) -> Option<Source> {
    let inner = command_name(args[i].as_str());
    match stdin {
        Source::Found(start) => find::each_found(az, &args[i..], start),
        Source::Pids if inner == "kill" => az.flag_rule(&rules::KILL_ALL),
        // Pids looked up by a pipeline (`ps aux | grep x | awk ... | xargs kill`).
        Source::Produced if inner == "kill" => az.flag_rule(&rules::KILL_LOOKUP),
        Source::Literal(text) => return Some(literal(az, args, i, text)),
        _ => {}
    }
    None
}

/// `xargs cmd <<< "words"`: the words are appended to the command (or replace the `-I`
/// string, one line at a time).
fn literal(az: &mut Analyzer, args: &[Arg<'_>], i: usize, text: &str) -> Source {
    let options = &args[1..i];
    if let Some(replace) = replace_string(options) {
        for line in text.lines().filter(|l| !l.trim().is_empty()).take(16) {
            let replaced: Vec<Arg<'_>> = args[i..]
                .iter()
                .map(|a| Arg::literal(a.as_str().replace(replace, line)))
                .collect();
            run(az, &replaced, &Source::Plain);
        }
        return Source::Produced;
    }
    let mut full: Vec<Arg<'_>> = args[i..].to_vec();
    if options
        .iter()
        .any(|a| matches!(a.as_str(), "-0" | "--null"))
    {
        // NUL-separated: the whole text is one argument.
        full.push(Arg::literal(
            text.trim_end_matches(['\0', '\n']).to_string(),
        ));
    } else if options
        .iter()
        .any(|a| a.as_str().starts_with("-d") || a.as_str().starts_with("--delim"))
    {
        full.extend(text.lines().map(|l| Arg::literal(l.to_string())));
    } else {
        full.extend(text.split_whitespace().map(|w| Arg::literal(w.to_string())));
    }
    run(az, &full, &Source::Plain)
}

/// The replace string of `xargs -I STR`, `-ISTR`, `-i` (`{}`), `--replace[=STR]`.
fn replace_string<'a>(options: &'a [Arg<'_>]) -> Option<&'a str> {
    for (k, a) in options.iter().enumerate() {
        let w = a.as_str();
        if w == "-I" {
            return options.get(k + 1).map(|v| v.as_str());
        }
        if let Some(s) = w.strip_prefix("-I") {
            return Some(s);
        }
        if w == "-i" || w == "--replace" {
            return Some("{}");
        }
        if let Some(s) = w
            .strip_prefix("--replace=")
            .or_else(|| w.strip_prefix("-i"))
        {
            return Some(s);
        }
    }
    None
}
