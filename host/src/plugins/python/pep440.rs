//! PEP 440 versions (what pip and Hermes read from a distribution's metadata: `0.2.0a9`,
//! `1.0.post1`, `2026.6.11.1`, `1!2.0.dev3+local`) as semver, so that a pre-release or a
//! four-part release is shown as what it is rather than as `0.0.0` with a warning.
//!
//! The release's first three numbers become semver's (missing ones are 0); a
//! pre-release (`a`/`alpha`, `b`/`beta`, `rc`/`c`/`pre`/`preview`, with Python's
//! spellings normalised) becomes semver's pre-release `a9`, and `.devN` is added to it
//! (`dev3` alone, `a9.dev3` after a pre-release). Semver orders `a` < `b` < `rc` < the
//! release as pip does, but puts a dev release after the pre-releases of its version
//! (pip: before); these versions are shown, not compared. What
//! semver has no place for — release numbers past the third, the epoch, `.postN` and
//! the local label — goes to the build metadata, which semver ignores when ordering.

use semver::{BuildMetadata, Prerelease, Version};

/// `text` read as a PEP 440 version (case-insensitive, `v` prefix and Python's
/// alternative separators accepted); `None` when it is not one.
pub fn parse(text: &str) -> Option<Version> {
    let lower = text.trim().to_ascii_lowercase();
    let rest = lower.strip_prefix('v').unwrap_or(&lower);
    let (rest, local) = match rest.split_once('+') {
        Some((public, local)) => (public, Some(local)),
        None => (rest, None),
    };
    let (epoch, rest) = match rest.split_once('!') {
        Some((epoch, rest)) => (Some(number(epoch)?), rest),
        None => (None, rest),
    };
    let release_end = release_end(rest);
    let release: Vec<u64> = rest
        .get(..release_end)?
        .split('.')
        .map(number)
        .collect::<Option<_>>()?;
    let suffix = Suffix::parse(rest.get(release_end..)?)?;
    let mut build: Vec<String> = Vec::new();
    if release.len() > 3 {
        build.extend(release.iter().skip(3).map(u64::to_string));
    }
    if let Some(epoch) = epoch {
        build.push(format!("epoch{epoch}"));
    }
    if let Some(post) = suffix.post {
        build.push(format!("post{post}"));
    }
    if let Some(local) = local {
        let parts: Vec<&str> = local.split(['.', '-', '_']).collect();
        if parts.iter().any(|p| p.is_empty()) {
            return None;
        }
        build.extend(parts.iter().map(|p| p.to_string()));
    }
    let mut pre: Vec<String> = Vec::new();
    if let Some((label, n)) = suffix.pre {
        pre.push(format!("{label}{n}"));
    }
    if let Some(dev) = suffix.dev {
        pre.push(format!("dev{dev}"));
    }
    let at = |i: usize| release.get(i).copied().unwrap_or(0);
    let mut version = Version::new(at(0), at(1), at(2));
    version.pre = Prerelease::new(&pre.join(".")).ok()?;
    version.build = BuildMetadata::new(&build.join(".")).ok()?;
    Some(version)
}

/// A run of ASCII digits as a number.
fn number(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// Where the dotted release numbers end.
fn release_end(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut end = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes.get(i) {
            Some(b) if b.is_ascii_digit() => end = i + 1,
            Some(b'.') if bytes.get(i + 1).is_some_and(u8::is_ascii_digit) => {}
            _ => break,
        }
        i += 1;
    }
    end
}

/// What follows the release.
#[derive(Default)]
struct Suffix {
    pre: Option<(&'static str, u64)>,
    post: Option<u64>,
    dev: Option<u64>,
}

/// The normalised pre-release labels, longest spelling first.
const PRE_LABELS: [(&str, &str); 8] = [
    ("preview", "rc"),
    ("alpha", "a"),
    ("beta", "b"),
    ("pre", "rc"),
    ("rc", "rc"),
    ("a", "a"),
    ("b", "b"),
    ("c", "rc"),
];

impl Suffix {
    fn parse(mut text: &str) -> Option<Suffix> {
        let suffix = Suffix {
            pre: take_label(&mut text, &PRE_LABELS)?,
            post: match take_label(&mut text, &POST_LABELS)? {
                Some((_, n)) => Some(n),
                None => take_implicit_post(&mut text)?,
            },
            dev: take_label(&mut text, &[("dev", "dev")])?.map(|(_, n)| n),
        };
        text.is_empty().then_some(suffix)
    }
}

/// The post-release labels.
const POST_LABELS: [(&str, &str); 3] = [("post", "post"), ("rev", "post"), ("r", "post")];

/// Skip Python's optional separator.
fn skip_separator(text: &str) -> &str {
    text.strip_prefix(['.', '-', '_']).unwrap_or(text)
}

/// The leading digits of `text` as a number (0 when there are none) and what follows.
fn take_number(text: &str) -> Option<(u64, &str)> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let n = if digits == 0 {
        0
    } else {
        number(text.get(..digits)?)?
    };
    Some((n, text.get(digits..)?))
}

/// One of `labels` (and its number) at the start of `text`, consumed: `Some(None)` when
/// there is none, `None` when its number is unreadable.
fn take_label(
    text: &mut &str,
    labels: &[(&str, &'static str)],
) -> Option<Option<(&'static str, u64)>> {
    let trimmed = skip_separator(text);
    let Some((name, normal)) = labels.iter().find(|(n, _)| trimmed.starts_with(n)) else {
        return Some(None);
    };
    let (n, rest) = take_number(skip_separator(trimmed.get(name.len()..)?))?;
    *text = rest;
    Some(Some((normal, n)))
}

/// `1.0-1`: an implicit post-release, consumed.
fn take_implicit_post(text: &mut &str) -> Option<Option<u64>> {
    let Some(rest) = text.strip_prefix('-') else {
        return Some(None);
    };
    if !rest.starts_with(|c: char| c.is_ascii_digit()) {
        return Some(None);
    }
    let (n, rest) = take_number(rest)?;
    *text = rest;
    Some(Some(n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn pep440_versions_as_semver() {
        let cases = [
            ("1.2.3", "1.2.3"),
            ("1", "1.0.0"),
            ("0.3", "0.3.0"),
            ("v2.1", "2.1.0"),
            ("0.2.0a9", "0.2.0-a9"),
            ("0.2.0b5", "0.2.0-b5"),
            ("0.1.0a11", "0.1.0-a11"),
            ("1.0rc1", "1.0.0-rc1"),
            ("1.0c1", "1.0.0-rc1"),
            ("1.0-alpha.2", "1.0.0-a2"),
            ("1.0.Beta", "1.0.0-b0"),
            ("1.0.dev3", "1.0.0-dev3"),
            ("1.0a1.dev2", "1.0.0-a1.dev2"),
            ("1.0.post1", "1.0.0+post1"),
            ("1.0-1", "1.0.0+post1"),
            ("2026.6.11.1", "2026.6.11+1"),
            ("0.20.4.1", "0.20.4+1"),
            ("1!2.0", "2.0.0+epoch1"),
            ("1.0+ubuntu-1", "1.0.0+ubuntu.1"),
        ];
        for (given, expected) in cases {
            let parsed = parse(given).map(|v| v.to_string());
            assert_eq!(parsed.as_deref(), Some(expected), "{given}");
        }
    }

    #[test]
    fn non_versions_are_refused() {
        for given in [
            "", "beta", "1.", "1..2", "1.0x", "1.0+", "1.0+a..b", "latest",
        ] {
            assert_eq!(parse(given), None, "{given:?}");
        }
    }

    #[test]
    fn pre_releases_sort_before_their_release() {
        let order = ["1.0a1", "1.0a2", "1.0b1", "1.0rc1", "1.0", "1.0.1a1"];
        let parsed: Vec<Version> = order.iter().map(|v| parse(v).unwrap()).collect();
        for pair in parsed.windows(2) {
            assert!(pair[0] < pair[1], "{} < {}", pair[0], pair[1]);
        }
    }

    proptest! {
        #[test]
        fn any_text_is_parsed_or_refused_without_panicking(text in "\\PC{0,24}") {
            let _ = parse(&text);
        }

        #[test]
        fn canonical_versions_keep_their_numbers(
            major in 0u64..10_000, minor in 0u64..1000, patch in 0u64..1000,
            pre in proptest::option::of((prop_oneof!["a", "b", "rc"], 0u64..100)),
        ) {
            let text = match &pre {
                Some((label, n)) => format!("{major}.{minor}.{patch}{label}{n}"),
                None => format!("{major}.{minor}.{patch}"),
            };
            let v = parse(&text).unwrap();
            prop_assert_eq!((v.major, v.minor, v.patch), (major, minor, patch));
            prop_assert_eq!(v.pre.is_empty(), pre.is_none());
        }
    }
}
