//! The analyser: walks every command that runs (through either front-end), strips
//! wrappers, runs the rules and collects findings. Payloads that are themselves shell code
//! (`sh -c`, `eval`, `su -c`, `$(...)`, heredocs fed to a shell) are analysed recursively,
//! up to [`MAX_DEPTH`] levels; deeper nesting is reported (fail closed).

use super::checks;
use super::fastpath;
use super::model::{Arg, Cmd, Input, Placement, Source};
use super::normalize::normalize;
use super::rules::{self, Rule};
use super::shell;
use super::verdict::Finding;

/// Payload nesting limit (`sh -c "sh -c '...'"`).
pub(crate) const MAX_DEPTH: u8 = 8;

/// Analysis state for one top-level command.
#[derive(Debug, Default)]
pub(crate) struct Analyzer {
    /// What fired so far.
    pub findings: Vec<Finding>,
    depth: u8,
    /// Literal variable assignments seen (`x=rm`), most recent last.
    vars: Vec<(String, String)>,
    /// Files made executable (`chmod +x f`), for "chmod then run".
    executables: Vec<String>,
    /// Name of the function whose body is being walked.
    function: Option<String>,
    /// Whether the fast path handled the top-level text (for tests and benches).
    pub used_fast_path: bool,
    /// Force the full parser (differential tests of the fast path).
    pub force_full_parser: bool,
    /// When set, every command line seen (each wrapper level, executable path reduced to
    /// its name) is recorded here, for deny-rule matching.
    pub lines: Option<Vec<String>>,
}

impl Analyzer {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Record a finding.
    pub(crate) fn flag(&mut self, finding: Finding) {
        if !self.findings.iter().any(|f| f.rule.key == finding.rule.key) {
            self.findings.push(finding);
        }
    }

    /// Record a finding with the rule's description.
    pub(crate) fn flag_rule(&mut self, rule: &'static Rule) {
        self.flag(Finding::new(rule));
    }

    /// Analyse shell text (the top-level command or a payload). Returns where the output of
    /// its last command comes from.
    pub(crate) fn script(&mut self, text: &str) -> Source {
        if self.depth >= MAX_DEPTH {
            self.flag_rule(&rules::TOO_DEEP);
            return Source::Plain;
        }
        self.depth += 1;
        let text = normalize(text);
        let fast = if self.force_full_parser {
            None
        } else {
            fastpath::parse(&text)
        };
        let out = match fast {
            Some(pipelines) => {
                if self.depth == 1 {
                    self.used_fast_path = true;
                }
                let mut out = Source::Plain;
                for pipeline in &pipelines {
                    let placement = Placement {
                        in_pipeline: pipeline.len() > 1,
                        background: false,
                    };
                    let mut source = Source::Plain;
                    for cmd in pipeline {
                        source = self.command(cmd, &source, placement);
                    }
                    out = source;
                }
                out
            }
            None => shell::analyze(self, &text),
        };
        self.depth -= 1;
        out
    }

    /// Analyse one simple command whose stdin comes from `stdin`. Returns where its stdout
    /// comes from.
    pub(crate) fn command(&mut self, cmd: &Cmd<'_>, stdin: &Source, place: Placement) -> Source {
        for target in &cmd.writes {
            checks::files::write_target(self, target, "redirection");
        }
        let stdin = match &cmd.input {
            Some(Input::Text(text)) => Source::Literal(text.to_string()),
            Some(Input::Tainted(source)) => source.clone(),
            Some(Input::File) => Source::Plain,
            None => stdin.clone(),
        };
        let Some(first) = cmd.args.first() else {
            return Source::Plain;
        };
        if let Some(function) = &self.function
            && (place.in_pipeline || place.background)
            && first.as_str() == function
        {
            self.flag_rule(&rules::FORK_BOMB);
        }
        self.record_assignments(&cmd.args);
        checks::run(self, &cmd.args, &stdin)
    }

    /// Remember `export/declare/local/readonly NAME=literal`.
    fn record_assignments(&mut self, args: &[Arg<'_>]) {
        if !matches!(
            args[0].as_str(),
            "export" | "declare" | "local" | "readonly" | "typeset"
        ) {
            return;
        }
        for arg in &args[1..] {
            if !arg.dynamic
                && let Some((name, value)) = arg.as_str().split_once('=')
            {
                self.set_var(name, value);
            }
        }
    }

    /// Record a literal assignment.
    pub(crate) fn set_var(&mut self, name: &str, value: &str) {
        self.vars.retain(|(n, _)| n != name);
        self.vars.push((name.to_string(), value.to_string()));
    }

    /// The literal value of a variable assigned earlier in the script.
    pub(crate) fn var(&self, name: &str) -> Option<&str> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Walk a function body: calling the function from inside itself in a pipeline or in
    /// the background is a fork bomb.
    pub(crate) fn in_function<T>(&mut self, name: &str, f: impl FnOnce(&mut Self) -> T) -> T {
        let saved = self.function.replace(name.to_string());
        let out = f(self);
        self.function = saved;
        out
    }

    /// Record a command line for deny-rule matching.
    pub(crate) fn record_line(&mut self, args: &[Arg<'_>]) {
        if let Some(lines) = &mut self.lines {
            let mut line = super::model::command_name(args[0].as_str()).into_owned();
            for arg in &args[1..] {
                line.push(' ');
                line.push_str(arg.as_str());
            }
            if !lines.contains(&line) {
                lines.push(line);
            }
        }
    }

    /// Remember a file made executable.
    pub(crate) fn made_executable(&mut self, path: &str) {
        let path = path.strip_prefix("./").unwrap_or(path);
        self.executables.push(path.to_string());
    }

    /// True when `word` runs a file made executable earlier in this command.
    pub(crate) fn runs_fresh_executable(&self, word: &str) -> bool {
        if self.executables.is_empty() || !word.contains('/') {
            return false;
        }
        let word = word.strip_prefix("./").unwrap_or(word);
        self.executables.iter().any(|p| p == word)
    }
}
