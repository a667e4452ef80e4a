//! Word expansion as bash would do it, as far as the text alone tells: quotes and
//! escapes removed, `$'...'` decoded, `$IFS` splitting, braces, `~`, variables, arrays and
//! positional parameters assigned literally earlier, `$HOME`/`$PWD` in any spelling,
//! `$(echo X)` replaced by `X`. What stays unknown keeps its source text and is marked
//! dynamic, so the rules can fail closed on it.

use std::borrow::Cow;

use brush_parser::ast;
use brush_parser::word::{self, ParameterExpr, WordPiece, WordPieceWithSource};

use super::analyze::Analyzer;
use super::ansi_c::decode_ansi_c;
use super::model::{Arg, Source};
use super::shell::options;

pub(crate) fn join_fields(fields: Vec<Arg<'_>>) -> String {
    super::wrappers::join(&fields)
}

/// Accumulates fields while resolving a word.
#[derive(Default)]
pub(crate) struct Acc {
    fields: Vec<Arg<'static>>,
    current: String,
    dynamic: bool,
    taint: Option<Source>,
    pub(crate) started: bool,
}

impl Acc {
    pub(crate) fn push(&mut self, s: &str) {
        self.current.push_str(s);
        self.started = true;
    }
    pub(crate) fn split(&mut self) {
        if self.started {
            self.fields.push(Arg {
                text: Cow::Owned(std::mem::take(&mut self.current)),
                dynamic: self.dynamic,
                taint: self.taint.take(),
            });
        }
        self.dynamic = false;
        self.started = false;
    }
    pub(crate) fn finish(mut self) -> Vec<Arg<'static>> {
        self.split();
        self.fields
    }
    pub(crate) fn finish_text(self) -> String {
        join_fields(self.finish())
    }
}

/// Resolve one word into fields (usually one; `$IFS` splits, braces expand).
pub(crate) fn words(az: &mut Analyzer, w: &ast::Word) -> Vec<Arg<'static>> {
    let text = &w.value;
    let fields = match word::parse(text, &options()) {
        Ok(pieces) => {
            let mut acc = Acc::default();
            self::pieces(az, text, &pieces, false, &mut acc);
            acc.finish()
        }
        Err(_) => vec![Arg {
            text: Cow::Owned(text.clone()),
            dynamic: true,
            taint: None,
        }],
    };
    let mut out = Vec::with_capacity(fields.len());
    for field in fields {
        brace_expand(field, &mut out);
    }
    out
}

/// `{a,b}` alternatives (one level, at most 64), applied to the unquoted result.
fn brace_expand(arg: Arg<'static>, out: &mut Vec<Arg<'static>>) {
    let text = arg.as_str();
    let (Some(open), Some(close)) = (text.find('{'), text.rfind('}')) else {
        out.push(arg);
        return;
    };
    let inner = &text[open + 1..close.max(open + 1)];
    if close <= open || !inner.contains(',') || inner.contains('{') {
        out.push(arg);
        return;
    }
    for alt in inner.split(',').take(64) {
        out.push(Arg {
            text: Cow::Owned(format!("{}{alt}{}", &text[..open], &text[close + 1..])),
            dynamic: arg.dynamic,
            taint: arg.taint.clone(),
        });
    }
}

pub(crate) fn pieces(
    az: &mut Analyzer,
    source: &str,
    pieces: &[WordPieceWithSource],
    quoted: bool,
    acc: &mut Acc,
) {
    for p in pieces {
        let raw = source.get(p.start_index..p.end_index).unwrap_or_default();
        match &p.piece {
            WordPiece::Text(t) => acc.push(t),
            WordPiece::SingleQuotedText(t) => acc.push(t),
            WordPiece::AnsiCQuotedText(t) => acc.push(&decode_ansi_c(t)),
            WordPiece::DoubleQuotedSequence(inner)
            | WordPiece::GettextDoubleQuotedSequence(inner) => {
                acc.started = true;
                // Offsets of inner pieces are relative to the same source string.
                self::pieces(az, source, inner, true, acc);
            }
            WordPiece::TildeExpansion(t) => acc.push(&tilde(t)),
            WordPiece::EscapeSequence(s) => {
                let c = s.strip_prefix('\\').unwrap_or(s);
                if quoted && !matches!(c, "$" | "`" | "\"" | "\\" | "\n") {
                    acc.push(s);
                } else if c != "\n" {
                    acc.push(c);
                }
            }
            WordPiece::ParameterExpansion(expr) => parameter(az, expr, raw, quoted, acc),
            WordPiece::CommandSubstitution(inner) => substitution(az, inner, raw, quoted, acc),
            WordPiece::BackquotedCommandSubstitution(inner) => {
                let unescaped = unescape_backquoted(inner);
                substitution(az, &unescaped, raw, quoted, acc)
            }
            WordPiece::ArithmeticExpression(expr) => {
                arithmetic(az, &expr.value);
                acc.push(raw);
                acc.dynamic = true;
            }
        }
    }
}

fn tilde(t: &word::TildeExpr) -> String {
    match t {
        word::TildeExpr::Home => "~".to_string(),
        word::TildeExpr::UserHome(user) if user == "root" => "/root".to_string(),
        word::TildeExpr::UserHome(user) => format!("/home/{user}"),
        _ => "~+".to_string(),
    }
}

fn parameter(az: &mut Analyzer, expr: &ParameterExpr, raw: &str, quoted: bool, acc: &mut Acc) {
    if home_or_pwd(az, expr, acc) || known_parameter(az, expr, quoted, acc) {
        return;
    }
    let name = match expr {
        ParameterExpr::Parameter {
            parameter: word::Parameter::Named(name),
            indirect: false,
        } => Some(name.as_str()),
        _ => None,
    };
    let is_ifs = match expr {
        ParameterExpr::Parameter { parameter, .. } | ParameterExpr::Substring { parameter, .. } => {
            matches!(parameter, word::Parameter::Named(n) if n == "IFS")
        }
        _ => false,
    };
    if is_ifs {
        if quoted {
            let ifs = ifs(az).to_string();
            acc.push(&ifs);
        } else {
            acc.split();
        }
        return;
    }
    if let Some(value) = name.and_then(|n| az.var(n)).map(str::to_string) {
        push_fields(az, acc, &value, quoted);
        return;
    }
    // `${x:-rm}` / `${x:=rm}` with x unknown: the default is what runs.
    if let ParameterExpr::UseDefaultValues {
        parameter: word::Parameter::Named(n),
        default_value: Some(default),
        ..
    }
    | ParameterExpr::AssignDefaultValues {
        parameter: word::Parameter::Named(n),
        default_value: Some(default),
        ..
    } = expr
        && az.var(n).is_none()
    {
        let resolved = resolve_inline(az, default);
        acc.push(&resolved);
        acc.dynamic = true;
        return;
    }
    acc.push(raw);
    acc.dynamic = true;
}

/// `$HOME` in any spelling (`${HOME}`, `${HOME:-x}`, `${HOME:0}`, `${HOME%/}`) stays
/// `$HOME` for the path rules; trimming a `/...` suffix off it names its parent (`/home`,
/// or `/` when everything is trimmed). `$PWD` is the directory of an earlier literal
/// `cd`, else `.`.
fn home_or_pwd(az: &mut Analyzer, expr: &ParameterExpr, acc: &mut Acc) -> bool {
    use ParameterExpr as P;
    let (parameter, trim) = match expr {
        P::Parameter { parameter, .. }
        | P::UseDefaultValues { parameter, .. }
        | P::AssignDefaultValues { parameter, .. }
        | P::IndicateErrorIfNullOrUnset { parameter, .. }
        | P::Substring { parameter, .. }
        | P::RemoveSmallestPrefixPattern { parameter, .. }
        | P::RemoveLargestPrefixPattern { parameter, .. } => (parameter, None),
        P::RemoveSmallestSuffixPattern {
            parameter, pattern, ..
        } => (parameter, pattern.as_deref().map(|p| (p, false))),
        P::RemoveLargestSuffixPattern {
            parameter, pattern, ..
        } => (parameter, pattern.as_deref().map(|p| (p, true))),
        _ => return false,
    };
    let word::Parameter::Named(name) = parameter else {
        return false;
    };
    match name.as_str() {
        "HOME" => {
            match trim {
                Some((pattern, largest)) if pattern.contains('/') && pattern != "/" => {
                    acc.push(if largest { "/" } else { "/home" });
                    acc.dynamic = true;
                }
                _ => acc.push("$HOME"),
            }
            true
        }
        "PWD" if trim.is_none() => {
            let cwd = az.cwd().unwrap_or(".").to_string();
            acc.push(&cwd);
            true
        }
        _ => false,
    }
}

/// Positional parameters (`$1`, `"$@"`, set by `sh -c '...' a0 a1`, `set --` or a
/// function call) and array elements (`${a[1]}`, `"${a[@]}"`) assigned literally earlier.
fn known_parameter(az: &mut Analyzer, expr: &ParameterExpr, quoted: bool, acc: &mut Acc) -> bool {
    let ParameterExpr::Parameter {
        parameter,
        indirect: false,
    } = expr
    else {
        return false;
    };
    let (key, list) = match parameter {
        word::Parameter::Positional(n) => (n.to_string(), false),
        word::Parameter::Special(word::SpecialParameter::AllPositionalParameters { .. }) => {
            ("@".to_string(), true)
        }
        word::Parameter::NamedWithIndex { name, index } => (format!("{name}[{index}]"), false),
        word::Parameter::NamedWithAllIndices { name, .. } => (format!("{name}[@]"), true),
        _ => return false,
    };
    let Some(value) = az.var(&key).map(str::to_string) else {
        return false;
    };
    if list {
        for (i, item) in value.split(LIST_SEP).filter(|v| !v.is_empty()).enumerate() {
            if i > 0 {
                acc.split();
            }
            acc.push(item);
        }
    } else {
        push_fields(az, acc, &value, quoted);
    }
    true
}

/// The field separators: a literal `IFS` assigned earlier, else space, tab, newline.
fn ifs(az: &Analyzer) -> &str {
    az.var("IFS").unwrap_or(" \t\n")
}

/// Push an expansion's value; unquoted, it is split into fields on `$IFS` the way bash
/// splits it (`x="rm -rf /"; $x` runs `rm` with two arguments, `IFS=,; $x` splits on
/// commas).
pub(crate) fn push_fields(az: &Analyzer, acc: &mut Acc, value: &str, quoted: bool) {
    if quoted {
        acc.push(value);
        return;
    }
    let ifs = ifs(az);
    if ifs.is_empty() {
        acc.push(value);
        return;
    }
    let mut start = 0;
    for (i, c) in value.char_indices() {
        if ifs.contains(c) {
            if i > start {
                acc.push(&value[start..i]);
            }
            acc.split();
            start = i + c.len_utf8();
        }
    }
    if start < value.len() {
        acc.push(&value[start..]);
    }
}

/// Separates the items of a list value (`"$@"`, `"${a[@]}"`) in the analyser's variables.
pub(crate) const LIST_SEP: char = '\u{1f}';

/// Resolve a nested word (e.g. a default value) to text.
fn resolve_inline(az: &mut Analyzer, text: &str) -> String {
    match word::parse(text, &options()) {
        Ok(ps) => {
            let mut acc = Acc::default();
            pieces(az, text, &ps, true, &mut acc);
            acc.finish_text()
        }
        Err(_) => text.to_string(),
    }
}

/// `$(...)`: the inner commands run (analysed); `$(echo X)` / `$(printf X)` yields X.
fn substitution(az: &mut Analyzer, inner: &str, raw: &str, quoted: bool, acc: &mut Acc) {
    let out = az.script(inner);
    match out {
        Source::Literal(text) => push_fields(az, acc, text.trim_end_matches('\n'), quoted),
        other => {
            acc.push(raw);
            acc.dynamic = true;
            if let Some(taint) = other.taint() {
                acc.taint = Some(taint);
            }
        }
    }
}

fn unescape_backquoted(inner: &str) -> String {
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&next) = chars.peek()
            && matches!(next, '$' | '`' | '\\')
        {
            out.push(next);
            chars.next();
            continue;
        }
        out.push(c);
    }
    out
}

/// Arithmetic text can hide command substitutions (`$(( $(cmd) ))`, `a[$(cmd)]`).
pub(crate) fn arithmetic(az: &mut Analyzer, text: &str) {
    if (text.contains("$(") || text.contains('`'))
        && let Ok(ps) = word::parse(text, &options())
    {
        let mut acc = Acc::default();
        pieces(az, text, &ps, true, &mut acc);
    }
}
