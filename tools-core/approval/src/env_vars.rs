//! Environment variables whose value is a command, a program or code that some program
//! runs later: `GIT_SSH_COMMAND`, `PAGER`, `EDITOR`, `LESSOPEN`, `PROMPT_COMMAND`, `PS4`,
//! `BASH_ENV`/`ENV` (a file every non-interactive shell sources), `GIT_CONFIG_PARAMETERS`,
//! `LD_PRELOAD`, `NODE_OPTIONS=--require`, ... An assignment to one of them — as a prefix
//! (`PAGER='sh -c x' git log`), through `export`/`env`/`sudo`, or on its own line — is
//! analysed when it is made, whether or not the analyser can see the program that will
//! read it: fail closed.

use super::analyze::Analyzer;
use super::checks::git::config_setting;
use super::model::{Arg, Source};
use super::rules;

/// Variables whose value is a shell command line.
const COMMAND_VARS: &[&str] = &[
    "GIT_SSH_COMMAND",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_EXTERNAL_DIFF",
    "GIT_ASKPASS",
    "GIT_PROXY_COMMAND",
    "GIT_SSH",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "PAGER",
    "MANPAGER",
    "SYSTEMD_PAGER",
    "BAT_PAGER",
    "DELTA_PAGER",
    "EDITOR",
    "VISUAL",
    "FCEDIT",
    "BROWSER",
    "PROMPT_COMMAND",
    "PS0",
    "PS1",
    "PS2",
    "PS4",
    "LESSOPEN",
    "LESSCLOSE",
    "RSYNC_RSH",
    "CVS_RSH",
    "TAR_OPTIONS",
    "GZIP",
    "MAKEFLAGS",
];

/// Variables naming a file of code that programs load or source.
const FILE_VARS: &[&str] = &["BASH_ENV", "ENV", "LD_PRELOAD", "LD_AUDIT", "PYTHONSTARTUP"];

/// Variables whose value is interpreter options that can load code.
const OPTION_VARS: &[&str] = &["NODE_OPTIONS", "PERL5OPT", "RUBYOPT", "PYTHONWARNINGS"];

/// True for a variable whose assignment the analyser must look at (the fast path leaves
/// such commands to the full parser).
pub(crate) fn carries_code(name: &str) -> bool {
    COMMAND_VARS.contains(&name)
        || FILE_VARS.contains(&name)
        || OPTION_VARS.contains(&name)
        || name == "GIT_CONFIG_PARAMETERS"
        || name.starts_with("GIT_CONFIG_VALUE_")
}

/// Judge `name=value`.
pub(crate) fn assignment(az: &mut Analyzer, name: &str, value: &Arg<'_>) {
    if (name == "HISTFILE" && matches!(value.as_str(), "" | "/dev/null"))
        || (matches!(name, "HISTSIZE" | "HISTFILESIZE") && value.as_str() == "0")
    {
        // History switched off: covering tracks.
        az.flag_rule(&rules::LOG_WIPE);
    }
    if !carries_code(name) {
        return;
    }
    let text = value.as_str();
    if value.dynamic && !text.is_empty() {
        az.flag_rule(&rules::DYNAMIC_CODE);
    }
    if COMMAND_VARS.contains(&name) {
        let command = match name {
            // `LESSOPEN='|cmd %s'` / `'||cmd %s'`: an input preprocessor.
            "LESSOPEN" | "LESSCLOSE" => text.trim_start_matches('|').replace("%s", "file"),
            // Options, not commands: `TAR_OPTIONS=--to-command=x`.
            "TAR_OPTIONS" | "GZIP" | "MAKEFLAGS" => {
                let mut words: Vec<Arg<'_>> = vec![Arg::literal(match name {
                    "TAR_OPTIONS" => "tar",
                    "GZIP" => "gzip",
                    _ => "make",
                })];
                words.extend(text.split_whitespace().map(|w| Arg::literal(w.to_string())));
                super::checks::run(az, &words, &Source::Plain);
                return;
            }
            _ => text.to_string(),
        };
        az.script(&command);
        return;
    }
    if FILE_VARS.contains(&name) {
        if text.is_empty() {
            return;
        }
        let file = Arg::literal(text.to_string());
        match az.written_file(&file) {
            Some(Source::Literal(code)) if name != "LD_PRELOAD" && name != "LD_AUDIT" => {
                az.script(&code);
            }
            _ => az.flag(super::verdict::Finding::with(
                &rules::UNRESOLVED,
                "a shell or the dynamic loader will run code from a file the analyser cannot see (BASH_ENV, ENV, LD_PRELOAD)",
            )),
        }
        return;
    }
    if OPTION_VARS.contains(&name) {
        let loads = text.split_whitespace().any(|w| {
            w.starts_with("--require")
                || w.starts_with("-r")
                || w.starts_with("--import")
                || w.starts_with("--loader")
                || w.starts_with("--experimental-loader")
                || w.starts_with("-M")
                || w.starts_with("-m")
                || w.starts_with("-e")
                || w.starts_with("-I")
        });
        if loads {
            az.flag(super::verdict::Finding::with(
                &rules::UNRESOLVED,
                "interpreter options in the environment load code the analyser cannot see",
            ));
        }
        return;
    }
    if name == "GIT_CONFIG_PARAMETERS" {
        // `'core.pager'='cmd' 'alias.x'='!cmd'`
        for entry in text.split("' '") {
            let entry = entry.replace('\'', "");
            config_setting(az, &entry);
        }
        return;
    }
    // `GIT_CONFIG_VALUE_n`: the key is in `GIT_CONFIG_KEY_n`; judge the value as a
    // command whatever the key (a harmless value reads as a harmless command).
    az.script(text.trim_start_matches('!'));
}
