//! The analyser's view of a command line: every command that runs, with its words resolved
//! as far as the text allows. Both front-ends (the fast path for plain commands and the
//! full shell parser) produce these, so the rules never see syntax.

use std::borrow::Cow;

/// Where a value or a stream comes from, as far as the rules care.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) enum Source {
    /// Nothing in particular (the agent's stdin, a file, a local program).
    #[default]
    Plain,
    /// Content fetched from the network (`curl`, `wget`, ...).
    Remote,
    /// Content decoded or transformed (`base64 -d`, `xxd -r`, `tr`, ...): obfuscation.
    Decoded,
    /// Literal text known statically (`echo 'x'`, a heredoc body).
    Literal(String),
    /// The output of a program whose output the analyser cannot know (`make_script`,
    /// `git show HEAD:x`, `sed ... f`): harmless as data, unresolved as code.
    Produced,
    /// The id of every process on the machine (`ps -e -o pid=`, `pgrep .`, `ls /proc`),
    /// unfiltered: signalling these is killing everything (`checks::pids`).
    Pids,
    /// The paths `find START` prints, START (kept here) being the root, a system
    /// directory or a home: a command run on each of them (`| xargs truncate -s0`) is
    /// judged on START (`checks::find`).
    Found(String),
}

impl Source {
    /// The more suspicious of two taints (literal text is not a taint).
    pub(crate) fn taint(&self) -> Option<Source> {
        match self {
            Source::Remote | Source::Decoded => Some(self.clone()),
            _ => None,
        }
    }
}

/// One word after quote removal and the expansions the analyser can resolve.
#[derive(Clone, Debug, Default)]
pub(crate) struct Arg<'a> {
    /// The value. Unresolved expansions keep their source text (`$X`, `$(cmd)`).
    pub text: Cow<'a, str>,
    /// Part of the value is only known at run time.
    pub dynamic: bool,
    /// The value (or the file it names) comes from the network or a decoder.
    pub taint: Option<Source>,
}

impl<'a> Arg<'a> {
    pub(crate) fn literal(text: impl Into<Cow<'a, str>>) -> Self {
        Arg {
            text: text.into(),
            dynamic: false,
            taint: None,
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }
}

/// Where a command's standard input comes from (besides a pipe).
#[derive(Clone, Debug)]
pub(crate) enum Input<'a> {
    /// A heredoc or here-string body (expansions already analysed and applied).
    Text(Cow<'a, str>),
    /// `< file`.
    File,
    /// `< <(curl ...)`: remote or decoded content.
    Tainted(Source),
}

/// One simple command as it runs.
#[derive(Clone, Debug, Default)]
pub(crate) struct Cmd<'a> {
    /// argv, including `VAR=value` prefixes removed.
    pub args: Vec<Arg<'a>>,
    /// Files written by redirections (`>`, `>>`, `&>`, `>|`, `<>`).
    pub writes: Vec<Arg<'a>>,
    /// The last stdin redirection.
    pub input: Option<Input<'a>>,
    /// Files read by `< file` redirections.
    pub reads: Vec<Arg<'a>>,
    /// Output process substitutions (`> >(sh)`, `tee >(bash)`): shell text that reads
    /// what the command prints, analysed after it with that output as its stdin.
    pub feeds: Vec<String>,
}

/// How a command is placed, for structural rules (fork bombs).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Placement {
    /// Part of a pipeline with more than one stage.
    pub in_pipeline: bool,
    /// Run in the background (`&`).
    pub background: bool,
}

/// The command name of a word: basename, lower-cased, without `.exe`.
pub(crate) fn command_name(word: &str) -> Cow<'_, str> {
    let base = word.rsplit(['/', '\\']).next().unwrap_or(word);
    let base = base
        .strip_suffix(".exe")
        .or_else(|| base.strip_suffix(".EXE"))
        .unwrap_or(base);
    if base.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(base.to_ascii_lowercase())
    } else {
        Cow::Borrowed(base)
    }
}
