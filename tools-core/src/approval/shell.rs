//! The full front-end: parses text with `brush-parser` (the parser of the brush shell, a
//! bash-compatible shell in Rust) and walks the syntax tree, turning every command that
//! runs into a [`Cmd`] for the analyser: simple commands in pipelines, lists, subshells,
//! groups, `if`/`while`/`for`/`case` bodies, function bodies, `$(...)`, backticks, process
//! substitution, `$((...))`, `[[ ... ]]` operands and expanding heredocs.
//!
//! Words are resolved the way the shell would before running: quotes and escapes removed,
//! `$'...'` decoded, `$IFS` splitting applied, variables assigned literally earlier in the
//! text substituted, `$(echo X)`/`$(printf X)` replaced by `X`. What stays unknown is
//! marked dynamic.
//!
//! Text the parser rejects is handled in [`super::detect`] (fail closed).

use std::borrow::Cow;

use brush_parser::ast;
use brush_parser::word::{self, ParameterExpr, WordPiece, WordPieceWithSource};
use brush_parser::{Parser, ParserOptions};

use super::analyze::Analyzer;
use super::model::{Arg, Cmd, Input, Placement, Source};

/// The parse failed.
#[derive(Debug)]
pub(crate) struct Unparseable;

fn options() -> ParserOptions {
    ParserOptions::default()
}

/// Parse `text` into a program.
pub(crate) fn parse(text: &str) -> Result<ast::Program, Unparseable> {
    let mut parser = Parser::new(std::io::BufReader::new(text.as_bytes()), &options());
    parser.parse_program().map_err(|_| Unparseable)
}

/// Parse and analyse `text`. On a parse error the text is reported unparseable and what
/// can be recovered is analysed (see [`super::detect`]).
pub(crate) fn analyze(az: &mut Analyzer, text: &str) -> Source {
    match parse(text) {
        Ok(program) => program_source(az, &program),
        Err(Unparseable) => super::detect::unparseable(az, text),
    }
}

pub(crate) fn program_source(az: &mut Analyzer, program: &ast::Program) -> Source {
    let mut out = Source::Plain;
    for complete in &program.complete_commands {
        out = compound_list(az, complete, &Source::Plain);
    }
    out
}

fn compound_list(az: &mut Analyzer, list: &ast::CompoundList, stdin: &Source) -> Source {
    let mut out = Source::Plain;
    for ast::CompoundListItem(and_or, separator) in &list.0 {
        let background = matches!(separator, ast::SeparatorOperator::Async);
        out = pipeline(az, &and_or.first, stdin, background);
        for next in &and_or.additional {
            let (ast::AndOr::And(p) | ast::AndOr::Or(p)) = next;
            out = pipeline(az, p, stdin, background);
        }
    }
    out
}

fn pipeline(az: &mut Analyzer, p: &ast::Pipeline, stdin: &Source, background: bool) -> Source {
    let place = Placement {
        in_pipeline: p.seq.len() > 1,
        background,
    };
    let mut source = stdin.clone();
    for command in &p.seq {
        source = self::command(az, command, &source, place);
    }
    source
}

fn command(az: &mut Analyzer, command: &ast::Command, stdin: &Source, place: Placement) -> Source {
    match command {
        ast::Command::Simple(simple) => simple_command(az, simple, stdin, place),
        ast::Command::Compound(compound, redirects) => {
            let mut cmd = Cmd::default();
            if let Some(list) = redirects {
                for r in &list.0 {
                    redirect(az, r, &mut cmd);
                }
            }
            for target in &cmd.writes {
                super::checks::files::write_target(az, target, "redirection");
            }
            let stdin = match &cmd.input {
                Some(Input::Text(t)) => Source::Literal(t.to_string()),
                Some(Input::Tainted(s)) => s.clone(),
                Some(Input::File) => Source::Plain,
                None => stdin.clone(),
            };
            compound_command(az, compound, &stdin, place)
        }
        ast::Command::Function(def) => {
            let name = def.fname.value.clone();
            az.define_function(&name, def.body.to_string());
            az.in_function(&name, |az| {
                compound_command(az, &def.body.0, &Source::Plain, Placement::default())
            });
            if let Some(list) = &def.body.1 {
                let mut cmd = Cmd::default();
                for r in &list.0 {
                    redirect(az, r, &mut cmd);
                }
            }
            Source::Plain
        }
        ast::Command::ExtendedTest(test, _) => {
            extended_test(az, &test.expr);
            Source::Plain
        }
    }
}

fn extended_test(az: &mut Analyzer, expr: &ast::ExtendedTestExpr) {
    match expr {
        ast::ExtendedTestExpr::And(a, b) | ast::ExtendedTestExpr::Or(a, b) => {
            extended_test(az, a);
            extended_test(az, b);
        }
        ast::ExtendedTestExpr::Not(a) | ast::ExtendedTestExpr::Parenthesized(a) => {
            extended_test(az, a)
        }
        ast::ExtendedTestExpr::UnaryTest(_, w) => {
            words(az, w);
        }
        ast::ExtendedTestExpr::BinaryTest(_, a, b) => {
            words(az, a);
            words(az, b);
        }
    }
}

fn compound_command(
    az: &mut Analyzer,
    compound: &ast::CompoundCommand,
    stdin: &Source,
    place: Placement,
) -> Source {
    use ast::CompoundCommand as C;
    match compound {
        C::BraceGroup(group) => compound_list_placed(az, &group.list, stdin, place),
        C::Subshell(sub) => compound_list_placed(az, &sub.list, stdin, place),
        C::ForClause(f) => {
            for w in f.values.iter().flatten() {
                words(az, w);
            }
            compound_list(az, &f.body.list, stdin)
        }
        C::ArithmeticForClause(f) => {
            for e in [&f.initializer, &f.condition, &f.updater]
                .into_iter()
                .flatten()
            {
                arithmetic(az, &e.value);
            }
            compound_list(az, &f.body.list, stdin)
        }
        C::Arithmetic(a) => {
            arithmetic(az, &a.expr.value);
            Source::Plain
        }
        C::CaseClause(c) => {
            words(az, &c.value);
            let mut out = Source::Plain;
            for item in &c.cases {
                for p in &item.patterns {
                    words(az, p);
                }
                if let Some(list) = &item.cmd {
                    out = compound_list(az, list, stdin);
                }
            }
            out
        }
        C::IfClause(c) => {
            compound_list(az, &c.condition, stdin);
            let mut out = compound_list(az, &c.then, stdin);
            for e in c.elses.iter().flatten() {
                if let Some(cond) = &e.condition {
                    compound_list(az, cond, stdin);
                }
                out = compound_list(az, &e.body, stdin);
            }
            out
        }
        C::WhileClause(w) | C::UntilClause(w) => {
            compound_list(az, &w.0, stdin);
            compound_list(az, &w.1.list, stdin)
        }
        C::Coprocess(c) => command(az, &c.body, stdin, place),
    }
}

/// A group or subshell inside a pipeline or in the background keeps that placement for
/// its commands (`:(){ :|:& }` and `{ f | f; }`).
fn compound_list_placed(
    az: &mut Analyzer,
    list: &ast::CompoundList,
    stdin: &Source,
    place: Placement,
) -> Source {
    let mut out = Source::Plain;
    for ast::CompoundListItem(and_or, separator) in &list.0 {
        let background = place.background || matches!(separator, ast::SeparatorOperator::Async);
        for p in std::iter::once(&and_or.first).chain(and_or.additional.iter().map(|a| {
            let (ast::AndOr::And(p) | ast::AndOr::Or(p)) = a;
            p
        })) {
            let inner = Placement {
                in_pipeline: place.in_pipeline || p.seq.len() > 1,
                background,
            };
            let mut source = stdin.clone();
            for c in &p.seq {
                source = command(az, c, &source, inner);
            }
            out = source;
        }
    }
    out
}

fn simple_command(
    az: &mut Analyzer,
    simple: &ast::SimpleCommand,
    stdin: &Source,
    place: Placement,
) -> Source {
    let mut cmd = Cmd::default();
    for item in simple.prefix.iter().flat_map(|p| p.0.iter()) {
        prefix_or_suffix(az, item, &mut cmd, true);
    }
    if let Some(word) = &simple.word_or_name {
        for arg in words(az, word) {
            cmd.args.push(arg);
        }
    }
    for item in simple.suffix.iter().flat_map(|s| s.0.iter()) {
        prefix_or_suffix(az, item, &mut cmd, false);
    }
    az.command(&cmd, stdin, place)
}

fn prefix_or_suffix(
    az: &mut Analyzer,
    item: &ast::CommandPrefixOrSuffixItem,
    cmd: &mut Cmd<'static>,
    prefix: bool,
) {
    use ast::CommandPrefixOrSuffixItem as I;
    match item {
        I::IoRedirect(r) => redirect(az, r, cmd),
        I::Word(w) => {
            let args = words(az, w);
            cmd.args.extend(args);
        }
        I::AssignmentWord(assignment, w) => {
            match &assignment.value {
                ast::AssignmentValue::Scalar(value) => {
                    let args = words(az, value);
                    if let ast::AssignmentName::VariableName(name) = &assignment.name
                        && args.len() <= 1
                        && args.iter().all(|a| !a.dynamic)
                    {
                        let value = args.first().map(|a| a.as_str()).unwrap_or_default();
                        az.set_var(name, value);
                    }
                    if !prefix {
                        // `make CC=gcc`: an ordinary argument.
                        cmd.args.extend(words(az, w));
                    }
                }
                ast::AssignmentValue::Array(values) => {
                    let mut items: Vec<Arg<'static>> = Vec::new();
                    for (key, value) in values {
                        if let Some(key) = key {
                            words(az, key);
                        }
                        items.extend(words(az, value));
                    }
                    if let ast::AssignmentName::VariableName(name) = &assignment.name {
                        az.set_array(name, &items);
                    }
                }
            }
        }
        I::ProcessSubstitution(_, sub) => {
            let source = compound_list(az, &sub.list, &Source::Plain);
            cmd.args.push(Arg {
                text: Cow::Borrowed("/dev/fd/63"),
                dynamic: true,
                taint: source.taint(),
            });
        }
    }
}

fn redirect(az: &mut Analyzer, r: &ast::IoRedirect, cmd: &mut Cmd<'static>) {
    use ast::IoFileRedirectKind as K;
    use ast::IoFileRedirectTarget as T;
    match r {
        ast::IoRedirect::File(_, kind, target) => match (kind, target) {
            (K::Read, T::Filename(w)) => {
                words(az, w);
                cmd.input = Some(Input::File);
            }
            (_, T::ProcessSubstitution(_, sub)) => {
                let source = compound_list(az, &sub.list, &Source::Plain);
                if matches!(kind, K::Read) {
                    cmd.input = Some(match source.taint() {
                        Some(taint) => Input::Tainted(taint),
                        None => Input::File,
                    });
                }
            }
            (K::Write | K::Append | K::Clobber | K::ReadAndWrite, T::Filename(w))
            | (K::DuplicateOutput, T::Filename(w) | T::Duplicate(w)) => {
                for arg in words(az, w) {
                    let is_fd =
                        arg.as_str() == "-" || arg.as_str().bytes().all(|b| b.is_ascii_digit());
                    if !(matches!(kind, K::DuplicateOutput) && is_fd) {
                        cmd.writes.push(arg);
                    }
                }
            }
            (_, T::Filename(w) | T::Duplicate(w)) => {
                words(az, w);
            }
            (_, T::Fd(_)) => {}
        },
        ast::IoRedirect::OutputAndError(w, _) => {
            cmd.writes.extend(words(az, w));
        }
        ast::IoRedirect::HereString(_, w) => {
            let text = join_fields(words(az, w));
            cmd.input = Some(Input::Text(Cow::Owned(text)));
        }
        ast::IoRedirect::HereDocument(_, doc) => {
            let body = if doc.requires_expansion {
                match word::parse_heredoc(&doc.doc.value, &options()) {
                    Ok(pieces) => {
                        let mut acc = Acc::default();
                        self::pieces(az, &doc.doc.value, &pieces, true, &mut acc);
                        acc.finish_text()
                    }
                    Err(_) => doc.doc.value.clone(),
                }
            } else {
                doc.doc.value.clone()
            };
            cmd.input = Some(Input::Text(Cow::Owned(body)));
        }
    }
}

fn join_fields(fields: Vec<Arg<'_>>) -> String {
    super::wrappers::join(&fields)
}

/// Accumulates fields while resolving a word.
#[derive(Default)]
struct Acc {
    fields: Vec<Arg<'static>>,
    current: String,
    dynamic: bool,
    taint: Option<Source>,
    started: bool,
}

impl Acc {
    fn push(&mut self, s: &str) {
        self.current.push_str(s);
        self.started = true;
    }
    fn split(&mut self) {
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
    fn finish(mut self) -> Vec<Arg<'static>> {
        self.split();
        self.fields
    }
    fn finish_text(self) -> String {
        join_fields(self.finish())
    }
}

/// Resolve one word into fields (usually one; `$IFS` splits, braces expand).
fn words(az: &mut Analyzer, w: &ast::Word) -> Vec<Arg<'static>> {
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

fn pieces(
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
            WordPiece::CommandSubstitution(inner) => substitution(az, inner, raw, acc),
            WordPiece::BackquotedCommandSubstitution(inner) => {
                let unescaped = unescape_backquoted(inner);
                substitution(az, &unescaped, raw, acc)
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
    if home_or_pwd(az, expr, acc) || known_parameter(az, expr, acc) {
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
            acc.push(" ");
        } else {
            acc.split();
        }
        return;
    }
    if let Some(value) = name.and_then(|n| az.var(n)).map(str::to_string) {
        acc.push(&value);
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
fn known_parameter(az: &mut Analyzer, expr: &ParameterExpr, acc: &mut Acc) -> bool {
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
        acc.push(&value);
    }
    true
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
fn substitution(az: &mut Analyzer, inner: &str, raw: &str, acc: &mut Acc) {
    let out = az.script(inner);
    match out {
        Source::Literal(text) => acc.push(text.trim_end_matches('\n')),
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
fn arithmetic(az: &mut Analyzer, text: &str) {
    if (text.contains("$(") || text.contains('`'))
        && let Ok(ps) = word::parse(text, &options())
    {
        let mut acc = Acc::default();
        pieces(az, text, &ps, true, &mut acc);
    }
}

/// Decode the body of `$'...'`.
pub(crate) fn decode_ansi_c(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        let mut take_digits = |radix: u32, max: usize, first: Option<char>| {
            let mut value = 0u32;
            let mut count = 0;
            if let Some(d) = first.and_then(|d| d.to_digit(radix)) {
                value = d;
                count = 1;
            }
            while count < max {
                match chars.peek().and_then(|d| d.to_digit(radix)) {
                    Some(d) => {
                        value = value * radix + d;
                        chars.next();
                        count += 1;
                    }
                    None => break,
                }
            }
            char::from_u32(value)
        };
        let decoded = match e {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'e' | 'E' => Some('\u{1b}'),
            'f' => Some('\u{c}'),
            'v' => Some('\u{b}'),
            '\\' | '\'' | '"' | '?' => Some(e),
            'x' => take_digits(16, 2, None),
            'u' => take_digits(16, 4, None),
            'U' => take_digits(16, 8, None),
            '0'..='7' => take_digits(8, 3, Some(e)),
            'c' => chars.next().map(|c| ((c as u8) & 0x1f) as char),
            other => {
                out.push('\\');
                Some(other)
            }
        };
        if let Some(d) = decoded {
            out.push(d);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_c_decoding() {
        assert_eq!(decode_ansi_c(r"\x72\x6d"), "rm");
        assert_eq!(decode_ansi_c(r"\162\155"), "rm");
        assert_eq!(decode_ansi_c(r"\u0072m"), "rm");
        assert_eq!(decode_ansi_c(r"a\nb"), "a\nb");
    }
}
