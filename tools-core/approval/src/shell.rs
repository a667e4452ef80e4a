//! The full front-end: parses text with `brush-parser` (the parser of the brush shell, a
//! bash-compatible shell in Rust) and walks the syntax tree, turning every command that
//! runs into a [`Cmd`] for the analyser: simple commands in pipelines, lists, subshells,
//! groups, `if`/`while`/`for`/`case` bodies, function bodies, `$(...)`, backticks, process
//! substitution, `$((...))`, `[[ ... ]]` operands and expanding heredocs.
//!
//! Words are resolved the way the shell would before running ([`super::expand`]); what
//! stays unknown is marked dynamic.
//!
//! Text the parser rejects is handled in [`super::detect`] (fail closed).

use std::borrow::Cow;

use brush_parser::ast;
use brush_parser::word;
use brush_parser::{Parser, ParserOptions};

use super::analyze::Analyzer;
use super::expand::{Acc, arithmetic, join_fields, pieces, words};
use super::model::{Arg, Cmd, Input, Placement, Source};

/// The parse failed.
#[derive(Debug)]
pub(crate) struct Unparseable;

/// The parser's options (bash defaults).
pub(crate) fn options() -> ParserOptions {
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
            super::checks::secrets::redirected(az, &cmd.reads);
            let stdin = match &cmd.input {
                Some(Input::Text(t)) => Source::Literal(t.to_string()),
                Some(Input::Tainted(s)) => s.clone(),
                Some(Input::File) => Source::Plain,
                None => stdin.clone(),
            };
            let out = compound_command(az, compound, &stdin, place);
            az.feed_all(&cmd.feeds, &out);
            out
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
            let mut values = Vec::new();
            for w in f.values.iter().flatten() {
                values.extend(words(az, w));
            }
            // The body runs with the loop variable set to each literal value (the first
            // 16); an unknown value leaves it unknown.
            let literal = values.iter().all(|v| !v.dynamic) && !values.is_empty();
            if !literal {
                az.forget_var(&f.variable_name);
                let pids = values.iter().any(super::checks::pids::lists_all);
                if pids {
                    az.pid_vars.push(f.variable_name.clone());
                }
                let out = compound_list(az, &f.body.list, stdin);
                if pids {
                    az.pid_vars.pop();
                }
                return out;
            }
            let mut out = Source::Plain;
            for v in values.iter().take(16) {
                az.set_var(&f.variable_name, v.as_str());
                out = compound_list(az, &f.body.list, stdin);
            }
            out
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
                    if let ast::AssignmentName::VariableName(name) = &assignment.name {
                        if prefix && super::env_vars::carries_code(name) {
                            let joined = Arg {
                                text: Cow::Owned(join_fields(args.clone())),
                                dynamic: args.iter().any(|a| a.dynamic),
                                taint: None,
                            };
                            super::env_vars::assignment(az, name, &joined);
                        }
                        if args.len() <= 1 && args.iter().all(|a| !a.dynamic) {
                            let value = args.first().map(|a| a.as_str()).unwrap_or_default();
                            az.set_var(name, value);
                        } else {
                            az.forget_var(name);
                        }
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
        I::ProcessSubstitution(ast::ProcessSubstitutionKind::Write, sub) => {
            cmd.feeds.push(sub.list.to_string());
            cmd.args.push(Arg {
                text: Cow::Borrowed("/dev/fd/63"),
                dynamic: true,
                taint: None,
            });
        }
        I::ProcessSubstitution(ast::ProcessSubstitutionKind::Read, sub) => {
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
                cmd.reads.extend(words(az, w));
                cmd.input = Some(Input::File);
            }
            (_, T::ProcessSubstitution(ast::ProcessSubstitutionKind::Write, sub))
                if !matches!(kind, K::Read | K::DuplicateInput) =>
            {
                cmd.feeds.push(sub.list.to_string());
            }
            (_, T::ProcessSubstitution(_, sub)) => {
                let source = compound_list(az, &sub.list, &Source::Plain);
                if matches!(kind, K::Read | K::DuplicateInput) {
                    cmd.input = Some(match source {
                        Source::Literal(text) => Input::Text(Cow::Owned(text)),
                        Source::Plain => Input::File,
                        other => Input::Tainted(other),
                    });
                }
            }
            (K::DuplicateInput, T::Filename(w) | T::Duplicate(w)) => {
                // `sh <&3`: whatever file descriptor 3 reads is unknown here.
                words(az, w);
                cmd.input = Some(Input::File);
            }
            (K::DuplicateInput, T::Fd(_)) => cmd.input = Some(Input::File),
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
            (_, T::Duplicate(w)) => {
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
