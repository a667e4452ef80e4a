//! Skills: reusable know-how the agent loads on demand, in the open Agent Skills
//! layout — a directory per skill with a `SKILL.md` (YAML front matter `name`,
//! `description`, optional metadata; a Markdown body) and optional `scripts/`,
//! `references/` and `assets/` (docs/hermes/skills.md).
//!
//! - [`catalog`]: the sources (bundled < `<home>/skills` < `./.toolhost/skills` <
//!   extra directories, later wins) and the cached listing;
//! - [`frontmatter`]: reading and validating `SKILL.md`;
//! - [`view`]: the `skills_list` / `skill_view` results (progressive disclosure:
//!   metadata in the list, the body on request, linked files by name);
//! - [`manage`]: `skill_manage`, the agent writing its own skills;
//! - [`guard`]: the scan every created, edited or installed skill passes;
//! - [`install`]: `toolhost skills install PATH`;
//! - [`bundled`]: the skills shipped inside toolhost.
//!
//! The tools themselves are in `tools/skills.rs`.

pub mod bundled;
pub mod catalog;
pub mod frontmatter;
pub mod guard;
mod guard_patterns;
pub mod install;
pub mod manage;
pub mod settings;
pub mod view;

pub use catalog::{SkillCatalog, SkillEntry, SkillRoot, SkillSource};
pub use guard::{GuardVerdict, ScanReport, Severity};
pub use settings::SkillsSettings;
