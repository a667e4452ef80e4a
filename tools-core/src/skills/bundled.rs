//! The skills shipped inside the toolhost binary (`tools-core/skills/`), embedded at
//! build time so there is no install step and nothing is written to the home.
//!
//! They are the lowest-precedence source: a skill of the same name in `<home>/skills`,
//! a project or an extra directory replaces it. Editing one through `skill_manage`
//! first copies it to `<home>/skills` (see `manage.rs`).

/// One embedded skill: its directory name and files (relative path, text).
#[derive(Debug)]
pub struct BundledSkill {
    /// Directory name (also the front-matter name).
    pub dir: &'static str,
    /// Every file, `SKILL.md` first.
    pub files: &'static [(&'static str, &'static str)],
}

impl BundledSkill {
    /// The text of `SKILL.md`.
    pub fn skill_md(&self) -> &'static str {
        self.file("SKILL.md").unwrap_or_default()
    }

    /// The text of the file at `rel` (a relative path), if the skill has one.
    pub fn file(&self, rel: &str) -> Option<&'static str> {
        self.files
            .iter()
            .find(|(path, _)| *path == rel)
            .map(|(_, text)| *text)
    }
}

macro_rules! bundled {
    ($dir:literal, [$($file:literal),* $(,)?]) => {
        BundledSkill {
            dir: $dir,
            files: &[
                ("SKILL.md", include_str!(concat!("../../skills/", $dir, "/SKILL.md"))),
                $(($file, include_str!(concat!("../../skills/", $dir, "/", $file))),)*
            ],
        }
    };
}

/// Every bundled skill.
pub static BUNDLED_SKILLS: &[BundledSkill] = &[
    bundled!("code-review", []),
    bundled!("skill-authoring", ["references/format.md"]),
    bundled!("systematic-debugging", []),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::{frontmatter, guard};

    #[test]
    fn every_bundled_skill_is_valid_and_named_after_its_folder() {
        for skill in BUNDLED_SKILLS {
            let doc = frontmatter::validate(skill.skill_md())
                .unwrap_or_else(|e| panic!("{}: {e}", skill.dir));
            assert_eq!(doc.str_field("name").as_deref(), Some(skill.dir));
        }
    }

    #[test]
    fn every_bundled_skill_passes_the_guard_without_findings() {
        for skill in BUNDLED_SKILLS {
            let report = guard::scan_files(skill.dir, skill.files.iter().copied());
            assert!(
                report.findings.is_empty(),
                "{}: {:?}",
                skill.dir,
                report.findings
            );
        }
    }
}
