//! The analyser: walks every command that runs (through either front-end), strips
//! wrappers, runs the rules and collects findings. Payloads that are themselves shell code
//! (`sh -c`, `eval`, `su -c`, `$(...)`, heredocs fed to a shell) are analysed recursively,
//! up to [`MAX_DEPTH`] levels; deeper nesting is reported (fail closed).

use super::checks;
use super::fastpath;
use super::model::{Arg, Cmd, Input, Placement, Source};
use std::borrow::Cow;

use regex::Regex;
use toolhost_text::LiteralRegex;

use super::downloads::Downloads;
use super::expand;
use super::normalize::{is_ambiguous, normalize};
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
    /// Functions defined in the command (name, body text), and those being called.
    functions: Vec<(String, String)>,
    calling: Vec<String>,
    /// Files written earlier in the command, with what they contain as far as known
    /// (`Produced` when unknown), so running or sourcing them is judged by that content.
    written: Vec<(String, Source)>,
    /// Files a downloader wrote in earlier commands of the same task (keys as in
    /// `written`), given by the gate: running one is `exec.run_downloaded`.
    pub earlier_downloads: Vec<String>,
    /// Symbolic and hard links made earlier in the command (`ln -s TARGET LINK`): link
    /// path, target path. Paths through them are judged by where they lead.
    links: Vec<(String, String)>,
    /// The directory a literal `cd` moved to (`~`, `$HOME/...` and absolute paths kept
    /// as written), for paths relative to it.
    cwd: Option<String>,
    /// Name of the function whose body is being walked.
    function: Option<String>,
    /// Strict mode's proof: `Some(true)` while every command seen only reads (see
    /// [`super::strict`]); `None` when not asked.
    pub strict: Option<bool>,
    /// The stdin of the first command of a script fed by an output process substitution
    /// or a shell's stdin (`feeds`).
    pub(crate) feed: Option<Source>,
    /// Loop variables that take every process id in turn (`for p in $(ps -e -o pid=)`).
    pub pid_vars: Vec<String>,
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

    /// A detector pattern, compiled; when it does not compile (a bug every pattern's test
    /// guards against) the command cannot be judged by it, so it is flagged
    /// `parse.unparseable` (dangerous, approvable): fail closed, never "matches nothing".
    pub(crate) fn pattern<'r>(&mut self, pattern: &'r LiteralRegex) -> Option<&'r Regex> {
        let compiled = pattern.get();
        if compiled.is_none() {
            self.flag(Finding::with(
                &rules::UNPARSEABLE,
                "a detector pattern does not compile, so the command cannot be judged",
            ));
        }
        compiled
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
        let normalized = normalize(text);
        if let Cow::Owned(folded) = &normalized
            && is_ambiguous(text, folded)
        {
            // Bash keeps these characters as parts of words: read the text its way too,
            // so a removed escape can never hide a `;` or a newline that bash sees.
            self.flag_rule(&rules::AMBIGUOUS);
            self.front_end(text);
        }
        if let Some(escaped) = super::comments::escape_word_hashes(&normalized) {
            // A `#` inside a word that the parser may read as a comment.
            self.front_end(&escaped);
        }
        let out = self.front_end(&normalized);
        self.depth -= 1;
        out
    }

    /// Read `text` with the fast path or the parser and analyse what runs.
    fn front_end(&mut self, text: &str) -> Source {
        let fast = if self.force_full_parser {
            None
        } else {
            fastpath::parse(text)
        };
        match fast {
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
            None => shell::analyze(self, text),
        }
    }

    /// Analyse one simple command whose stdin comes from `stdin`. Returns where its stdout
    /// comes from.
    pub(crate) fn command(&mut self, cmd: &Cmd<'_>, stdin: &Source, place: Placement) -> Source {
        if self.strict == Some(true) && !super::strict::command_is_safe(cmd) {
            self.strict = Some(false);
        }
        let out = self.command_inner(cmd, stdin, place);
        checks::secrets::redirected(self, &cmd.reads);
        self.feed_all(&cmd.feeds, &out);
        for target in &cmd.writes {
            let target = self.resolve(target);
            checks::files::write_target(self, &target, "redirection");
            self.wrote(target.as_str(), target.dynamic, &out);
        }
        out
    }

    fn command_inner(&mut self, cmd: &Cmd<'_>, stdin: &Source, place: Placement) -> Source {
        let stdin = match &cmd.input {
            Some(Input::Text(text)) => Source::Literal(text.to_string()),
            Some(Input::Tainted(source)) => source.clone(),
            Some(Input::File) => Source::Plain,
            None => match self.feed.take() {
                Some(fed) if *stdin == Source::Plain => fed,
                _ => stdin.clone(),
            },
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
            if let Some((name, value)) = arg.as_str().split_once('=') {
                let value_arg = Arg {
                    text: Cow::Owned(value.to_string()),
                    dynamic: arg.dynamic,
                    taint: arg.taint.clone(),
                };
                super::env_vars::assignment(self, name, &value_arg);
                if arg.dynamic {
                    self.forget_var(name);
                } else {
                    self.set_var(name, value);
                }
            }
        }
    }

    /// Record a literal assignment.
    pub(crate) fn set_var(&mut self, name: &str, value: &str) {
        self.vars.retain(|(n, _)| n != name);
        self.vars.push((name.to_string(), value.to_string()));
    }

    /// Record an array assignment `name=(a b c)`: `${name[i]}`, `${name[@]}` and `$name`.
    /// An array with an unknown element is forgotten (its uses stay unresolved).
    pub(crate) fn set_array(&mut self, name: &str, items: &[Arg<'_>]) {
        let all = format!("{name}[@]");
        self.vars
            .retain(|(n, _)| n != name && n != &all && !is_index_of(n, name));
        if items.iter().any(|a| a.dynamic) {
            return;
        }
        for (i, item) in items.iter().enumerate() {
            self.set_var(&format!("{name}[{i}]"), item.as_str());
        }
        if let Some(first) = items.first() {
            self.set_var(name, first.as_str());
        }
        let joined: Vec<&str> = items.iter().map(|a| a.as_str()).collect();
        self.set_var(&all, &joined.join(&expand::LIST_SEP.to_string()));
    }

    /// Set the positional parameters (`set -- a b`, a call of `sh -c '...' a0 a1`, a
    /// function call). `with_zero` says whether the first item is `$0`. Unknown values
    /// leave the parameters unset, so their uses stay unresolved.
    pub(crate) fn set_positional(&mut self, items: &[Arg<'_>], with_zero: bool) {
        self.vars.retain(|(n, _)| {
            !(n == "@" || (n.bytes().all(|b| b.is_ascii_digit()) && (with_zero || n != "0")))
        });
        if items.iter().any(|a| a.dynamic) {
            return;
        }
        let start = usize::from(!with_zero);
        for (i, item) in items.iter().enumerate() {
            self.set_var(&(i + start).to_string(), item.as_str());
        }
        let rest = if with_zero && !items.is_empty() {
            &items[1..]
        } else {
            items
        };
        let joined: Vec<&str> = rest.iter().map(|a| a.as_str()).collect();
        self.set_var("@", &joined.join(&expand::LIST_SEP.to_string()));
    }

    /// Run `f` with positional parameters set, restoring the previous ones after.
    pub(crate) fn with_positional<T>(
        &mut self,
        items: &[Arg<'_>],
        with_zero: bool,
        f: impl FnOnce(&mut Self) -> T,
    ) -> T {
        let saved: Vec<(String, String)> = self
            .vars
            .iter()
            .filter(|(n, _)| n == "@" || n.bytes().all(|b| b.is_ascii_digit()))
            .cloned()
            .collect();
        self.set_positional(items, with_zero);
        let out = f(self);
        self.vars
            .retain(|(n, _)| !(n == "@" || n.bytes().all(|b| b.is_ascii_digit())));
        self.vars.extend(saved);
        out
    }

    /// Forget a variable whose new value is unknown.
    pub(crate) fn forget_var(&mut self, name: &str) {
        self.vars
            .retain(|(n, _)| n != name && !is_index_of(n, name));
    }

    /// Remember a function definition.
    pub(crate) fn define_function(&mut self, name: &str, body: String) {
        self.functions.retain(|(n, _)| n != name);
        self.functions.push((name.to_string(), body));
    }

    /// The body of a function defined earlier, unless it is being called already.
    pub(crate) fn function_body(&self, name: &str) -> Option<String> {
        if self.functions.is_empty() || self.calling.iter().any(|c| c == name) {
            return None;
        }
        self.functions
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, b)| b.clone())
    }

    /// Analyse a call of a function defined earlier, with its arguments as `$1...`.
    pub(crate) fn call_function(&mut self, name: &str, body: &str, args: &[Arg<'_>]) {
        self.calling.push(name.to_string());
        self.with_positional(args, false, |az| az.script(body));
        self.calling.pop();
    }

    /// The directory of an earlier literal `cd`, if any.
    pub(crate) fn cwd(&self) -> Option<&str> {
        self.cwd.as_deref()
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

    /// A path argument as the command sees it: relative paths joined to the directory a
    /// literal `cd` moved to earlier in the command, links made earlier followed.
    pub(crate) fn resolve<'a>(&self, arg: &Arg<'a>) -> Arg<'a> {
        let joined = self.join_cwd(arg);
        match self.through_link(joined.as_str(), true) {
            Some(target) => Arg {
                text: Cow::Owned(target),
                dynamic: joined.dynamic,
                taint: joined.taint,
            },
            None => joined,
        }
    }

    /// Remember a link made by `ln [-s] TARGET LINK` (both as written; relative targets of
    /// symbolic links are relative to the link's directory).
    pub(crate) fn linked(&mut self, link: &Arg<'_>, target: &Arg<'_>, symbolic: bool) {
        if link.dynamic || target.dynamic {
            return;
        }
        let link = self
            .join_cwd(link)
            .as_str()
            .trim_end_matches('/')
            .to_string();
        let target = target.as_str();
        let target = if is_rooted(target) || !symbolic {
            self.resolve(&Arg::literal(target)).as_str().to_string()
        } else {
            match link.rsplit_once('/') {
                Some((dir, _)) => format!("{dir}/{target}"),
                None => self.resolve(&Arg::literal(target)).as_str().to_string(),
            }
        };
        let key = file_key(&link);
        self.links.retain(|(l, _)| *l != key);
        self.links.push((key, target));
    }

    /// True when `path` is exactly a link made earlier (removing it removes the link only).
    pub(crate) fn is_link(&self, path: &Arg<'_>) -> bool {
        if self.links.is_empty() || path.dynamic {
            return false;
        }
        let key = file_key(self.join_cwd(path).as_str());
        self.links.iter().any(|(l, _)| *l == key)
    }

    /// `link/rest` → `target/rest` for a link made earlier; `link` itself → `target` when
    /// `follow_final`.
    fn through_link(&self, path: &str, follow_final: bool) -> Option<String> {
        if self.links.is_empty() {
            return None;
        }
        let key = file_key(path);
        for (link, target) in self.links.iter().rev() {
            if key == *link && follow_final {
                return Some(target.clone());
            }
            if let Some(rest) = key.strip_prefix(link.as_str())
                && rest.starts_with('/')
            {
                return Some(format!("{}{rest}", target.trim_end_matches('/')));
            }
        }
        None
    }

    fn join_cwd<'a>(&self, arg: &Arg<'a>) -> Arg<'a> {
        match &self.cwd {
            Some(cwd) if !is_rooted(arg.as_str()) => {
                let rel = arg.as_str();
                let rel = rel.strip_prefix("./").unwrap_or(rel);
                let joined = if rel == "." || rel.is_empty() {
                    cwd.clone()
                } else {
                    format!("{}/{rel}", cwd.trim_end_matches('/'))
                };
                Arg {
                    text: Cow::Owned(joined),
                    dynamic: arg.dynamic,
                    taint: arg.taint.clone(),
                }
            }
            _ => arg.clone(),
        }
    }

    /// `cd DIR` / `pushd DIR`: remember the directory when it is known.
    pub(crate) fn change_dir(&mut self, target: Option<&Arg<'_>>) {
        let Some(target) = target else {
            self.cwd = Some("~".to_string());
            return;
        };
        let text = target.as_str();
        let agent_home = [
            "$TOOLHOST_HOME",
            "${TOOLHOST_HOME}",
            "$HERMES_HOME",
            "${HERMES_HOME}",
        ]
        .iter()
        .any(|h| text.starts_with(h));
        if (target.dynamic && !agent_home) || text == "-" {
            self.cwd = None;
            return;
        }
        let via_link = self.through_link(self.join_cwd(target).as_str(), true);
        self.cwd = if let Some(linked) = via_link {
            Some(linked)
        } else if is_rooted(text) {
            Some(text.to_string())
        } else if self.cwd.is_some() {
            Some(self.resolve(target).as_str().to_string())
        } else {
            None
        };
    }

    /// Remember that `path` was written with `content`.
    pub(crate) fn wrote(&mut self, path: &str, dynamic: bool, content: &Source) {
        if dynamic {
            return;
        }
        let key = file_key(path);
        let content = match content {
            Source::Plain => Source::Produced,
            other => other.clone(),
        };
        self.written.retain(|(p, _)| *p != key);
        self.written.push((key, content));
    }

    /// What a file written earlier in the command contains, if it was; a file an
    /// earlier command of the task downloaded counts as remote content too.
    pub(crate) fn written_file(&self, path: &Arg<'_>) -> Option<Source> {
        if path.dynamic || (self.written.is_empty() && self.earlier_downloads.is_empty()) {
            return None;
        }
        let key = file_key(self.resolve(path).as_str());
        self.written
            .iter()
            .rev()
            .find(|(p, _)| *p == key)
            .map(|(_, s)| s.clone())
            .or_else(|| self.downloaded_earlier(&key).then_some(Source::Remote))
    }

    /// True when an earlier command of the task downloaded `key` — the same path, or
    /// one with the same file name (the working directory may have changed between the
    /// commands; a false alarm here only asks).
    fn downloaded_earlier(&self, key: &str) -> bool {
        let name = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
        self.earlier_downloads
            .iter()
            .any(|d| d == key || name(d) == name(key))
    }

    /// Flag running the downloaded file `path`: downloaded in this command, or in an
    /// earlier one.
    pub(crate) fn flag_downloaded_run(&mut self, path: &Arg<'_>) {
        let key = file_key(self.resolve(path).as_str());
        if self.written.iter().any(|(p, _)| *p == key) {
            self.flag_rule(&rules::DOWNLOAD_THEN_RUN);
        } else {
            self.flag_rule(&rules::RUN_EARLIER_DOWNLOAD);
        }
    }

    /// What this command leaves downloaded, for the task's next commands.
    pub(crate) fn downloads(&self) -> Downloads {
        let mut out = Downloads::default();
        for (path, content) in &self.written {
            if *content == Source::Remote {
                out.fetched.push(path.clone());
            } else {
                out.replaced.push(path.clone());
            }
        }
        out
    }

    /// Remember a file made executable.
    pub(crate) fn made_executable(&mut self, path: &str) {
        let path = path.strip_prefix("./").unwrap_or(path);
        self.executables.push(path.to_string());
    }

    /// A file written earlier in the command is run as shell code (`sh f`, `. f`, `./f`):
    /// judge what it holds. Returns false when the file was not written here.
    pub(crate) fn run_written(&mut self, path: &Arg<'_>) -> bool {
        let Some(content) = self.written_file(path) else {
            return false;
        };
        match content {
            Source::Literal(text) => {
                self.script(&text);
            }
            Source::Remote => self.flag_downloaded_run(path),
            Source::Decoded => self.flag_rule(&rules::DECODED_TO_SHELL),
            Source::Produced | Source::Plain | Source::Pids | Source::Found(_) => {
                self.flag_rule(&rules::UNRESOLVED)
            }
        }
        true
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

/// Absolute or home-relative (not joined to a `cd` directory).
fn is_rooted(path: &str) -> bool {
    path.starts_with('/')
        || path == "~"
        || path.starts_with("~/")
        || path.starts_with("$HOME")
        || path.starts_with("${HOME}")
        || path.starts_with("$TOOLHOST_HOME")
        || path.starts_with("${TOOLHOST_HOME}")
}

/// The key a written file is remembered under.
fn file_key(path: &str) -> String {
    let path = path.strip_prefix("./").unwrap_or(path);
    path.replace("${HOME}", "$HOME")
        .replacen('~', "$HOME", usize::from(path.starts_with('~')))
}

/// `name[...]`.
fn is_index_of(var: &str, name: &str) -> bool {
    var.strip_prefix(name).is_some_and(|r| r.starts_with('['))
}
