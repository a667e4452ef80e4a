//! A small getopt for the commands the rules look into: which words are options, which
//! options take a value, and where the operands start. Each rule describes its command's
//! options with an [`OptSpec`]; unknown options are assumed to take no value.

use super::model::Arg;

/// How a command's options look.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct OptSpec {
    /// Short option letters that take a value (`-u root`, `-uroot`).
    pub short_with_value: &'static str,
    /// Long options that take a value (`--user root`, `--user=root`), without `--`.
    pub long_with_value: &'static [&'static str],
    /// Options stop at the first operand (POSIX); otherwise they may follow operands (GNU).
    pub stop_at_operand: bool,
}

/// One parsed item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Item<'s> {
    /// `-x` (one per letter of a bundle), with its value if it takes one.
    Short(char, Option<&'s str>),
    /// `--name` or `--name=value`.
    Long(&'s str, Option<&'s str>),
    /// An operand: its index in the slice given to [`parse`].
    Operand(usize),
}

/// Parse `args` (without the command name).
pub(crate) fn parse<'s>(args: &'s [Arg<'_>], spec: &OptSpec) -> Vec<Item<'s>> {
    let mut out = Vec::with_capacity(args.len());
    let mut i = 0;
    let mut options_done = false;
    while i < args.len() {
        let word = args[i].as_str();
        if options_done || word == "-" || !word.starts_with('-') {
            out.push(Item::Operand(i));
            if spec.stop_at_operand {
                options_done = true;
            }
            i += 1;
            continue;
        }
        if word == "--" {
            options_done = true;
            i += 1;
            continue;
        }
        if let Some(long) = word.strip_prefix("--") {
            match long.split_once('=') {
                Some((name, value)) => out.push(Item::Long(
                    canonical(name, spec).unwrap_or(name),
                    Some(value),
                )),
                None => match canonical(long, spec) {
                    Some(name) => {
                        let value = args.get(i + 1).map(|a| a.as_str());
                        out.push(Item::Long(name, value));
                        i += 1;
                    }
                    None => out.push(Item::Long(long, None)),
                },
            }
            i += 1;
            continue;
        }
        let letters = &word[1..];
        for (pos, c) in letters.char_indices() {
            if spec.short_with_value.contains(c) {
                let rest = &letters[pos + c.len_utf8()..];
                if rest.is_empty() {
                    let value = args.get(i + 1).map(|a| a.as_str());
                    out.push(Item::Short(c, value));
                    i += 1;
                } else {
                    out.push(Item::Short(c, Some(rest)));
                }
                break;
            }
            out.push(Item::Short(c, None));
        }
        i += 1;
    }
    out
}

/// The long option that takes a value which `name` spells: itself, or (GNU getopt) an
/// unambiguous abbreviation of one (`--sess` for `--session-command`, `--spl` for
/// `--split-string`).
fn canonical<'n>(name: &'n str, spec: &OptSpec) -> Option<&'n str> {
    if name.is_empty() {
        return None;
    }
    if spec.long_with_value.contains(&name) {
        return Some(name);
    }
    let mut matches = spec.long_with_value.iter().filter(|l| l.starts_with(name));
    match (matches.next(), matches.next()) {
        (Some(only), None) => Some(only),
        _ => None,
    }
}

/// Index (into `args`) of the first operand, if any.
pub(crate) fn first_operand(items: &[Item<'_>]) -> Option<usize> {
    items.iter().find_map(|item| match item {
        Item::Operand(i) => Some(*i),
        _ => None,
    })
}

/// True when a short option `c` or long option `long` is present.
pub(crate) fn has(items: &[Item<'_>], c: char, long: &str) -> bool {
    items.iter().any(|item| match item {
        Item::Short(s, _) => *s == c,
        // GNU getopt takes any unambiguous abbreviation (`--rec` for `--recursive`);
        // an ambiguous one is an error, so reading every prefix as the option is safe.
        Item::Long(l, _) => !long.is_empty() && !l.is_empty() && long.starts_with(l),
        Item::Operand(_) => false,
    })
}

/// The operands' indices.
pub(crate) fn operands<'i>(items: &'i [Item<'_>]) -> impl Iterator<Item = usize> + 'i {
    items.iter().filter_map(|item| match item {
        Item::Operand(i) => Some(*i),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&'static str]) -> Vec<Arg<'static>> {
        words.iter().map(|w| Arg::literal(*w)).collect()
    }

    #[test]
    fn bundles_values_and_operands() {
        let spec = OptSpec {
            short_with_value: "u",
            long_with_value: &["user"],
            stop_at_operand: true,
        };
        let a = args(&["-nu", "root", "--user", "bob", "--x=1", "cmd", "-rf"]);
        let items = parse(&a, &spec);
        assert_eq!(
            items,
            vec![
                Item::Short('n', None),
                Item::Short('u', Some("root")),
                Item::Long("user", Some("bob")),
                Item::Long("x", Some("1")),
                Item::Operand(5),
                Item::Operand(6),
            ]
        );
        assert_eq!(first_operand(&items), Some(5));
    }

    #[test]
    fn long_options_may_be_abbreviated() {
        let spec = OptSpec {
            short_with_value: "c",
            long_with_value: &["command", "session-command", "shell"],
            stop_at_operand: false,
        };
        let a = args(&["--sess", "rm -rf /", "--comm=x", "--s", "y", "--rec"]);
        let items = parse(&a, &spec);
        assert_eq!(
            items,
            vec![
                Item::Long("session-command", Some("rm -rf /")),
                Item::Long("command", Some("x")),
                Item::Long("s", None),
                Item::Operand(4),
                Item::Long("rec", None),
            ]
        );
        assert!(has(&items, 'r', "recursive"));
        assert!(!has(&items, 'f', "force"));
    }

    #[test]
    fn gnu_style_and_double_dash() {
        let spec = OptSpec::default();
        let a = args(&["build", "-rf", "--", "-x"]);
        let items = parse(&a, &spec);
        assert_eq!(
            items,
            vec![
                Item::Operand(0),
                Item::Short('r', None),
                Item::Short('f', None),
                Item::Operand(3),
            ]
        );
    }
}
