//! Shell text that names toolhost's home by its path: the gate's canonical-home check.
//!
//! The analyser recognises toolhost's home by name (`$TOOLHOST_HOME`,
//! `~/.config/toolhost`), not by where a custom or symlinked home really is: with
//! `TOOLHOST_HOME` a symlink, `cd <real path> && … > config.toml` rewrote the config
//! unasked. So before the analyser, a command (or text for a background
//! shell) that names the home — as given or as its real path ([`Home::spellings`]) —
//! followed by nothing (the home itself: a `cd` there) or by one of the protected
//! entries (`config.toml`, `state`, `plugins`, `scripts`, `skills`, `cron`) is put to
//! a human, like an edit of toolhost's configuration; with nobody to ask it is blocked.
//! `results/` (spilled tool output the model is pointed at) stays free. The check is
//! textual: a path assembled at run time escapes it, and the kernel floor is the
//! backstop there (docs/terminal.md, "Canonical home").

use crate::context::ToolContext;
use crate::home::Home;
use crate::services::CoreServices;
use crate::tools::guarded_write::ask_human;

/// Entries of the home a command may not name without a human.
const PROTECTED: &[&str] = &[
    "config.toml",
    "state",
    "plugins",
    "scripts",
    "skills",
    "cron",
];

/// Why the prompt asks.
const DESCRIPTION: &str = "command names toolhost's home (its configuration, state, plugins, \
                           scripts, skills or cron jobs)";

/// True when `text` names `home` itself or one of its protected entries.
pub fn names_protected_home_path(text: &str, home: &Home) -> bool {
    home.spellings().iter().any(|spelling| {
        let root = spelling.root().to_string_lossy();
        let root = root.trim_end_matches('/');
        !root.is_empty() && mentions(text, root)
    })
}

fn mentions(text: &str, root: &str) -> bool {
    text.match_indices(root).any(|(at, _)| {
        let rest = &text[at + root.len()..];
        match rest.chars().next() {
            None => true,
            Some('/') => {
                let entry = rest[1..]
                    .split(|c: char| c == '/' || !is_path_char(c))
                    .next()
                    .unwrap_or_default();
                entry.is_empty() || PROTECTED.contains(&entry)
            }
            Some(c) => !is_path_char(c),
        }
    })
}

/// Characters that continue a path word (a following one means another name:
/// `/h/home2` is not `/h/home`).
fn is_path_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '+' | '@' | '~' | ',' | '%')
}

/// Put `text` to a human when it names a protected part of the home: `Ok(None)` when it
/// does not, `Ok(Some(note))` when a human approved it, `Err(message)` when blocked.
pub fn check(
    services: &CoreServices,
    ctx: &ToolContext,
    text: &str,
) -> Result<Option<String>, String> {
    if !names_protected_home_path(text, &services.home) {
        return Ok(None);
    }
    ask_human(services, ctx, text.to_string(), DESCRIPTION).map(|note| {
        Some(note.unwrap_or_else(|| {
            "The command names toolhost's home and was approved by the user.".to_string()
        }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_of_the_home_are_classified() {
        let home = Home::at("/srv/th");
        let table = [
            ("cd /srv/th && echo x > config.toml", true),
            ("echo x > /srv/th/config.toml", true),
            ("cp evil.so /srv/th/plugins/x/", true),
            ("echo 'rm -rf ~' > /srv/th/scripts/job.sh", true),
            ("ls /srv/th", true),
            ("cd \"/srv/th\"; ls", true),
            ("cat /srv/th/results/spill-1.txt", false),
            ("ls /srv/th2", false),
            ("ls /srv/thing/config.toml", false),
            ("echo hello", false),
        ];
        for (text, want) in table {
            assert_eq!(names_protected_home_path(text, &home), want, "{text}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn the_real_path_of_a_symlinked_home_is_named_too() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real-home");
        std::fs::create_dir_all(&real).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let home = Home::at(&link);
        let real = real.canonicalize().unwrap();
        let text = format!("cd {} && echo x > config.toml", real.display());
        assert!(names_protected_home_path(&text, &home));
    }
}
