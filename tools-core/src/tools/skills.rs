//! `skills_list`, `skill_view` and `skill_manage` (toolset `skills`): Hermes' names,
//! parameters and result shapes (docs/hermes/skills.md); the work is in
//! [`crate::skills`].

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::entry::{Parallelism, ToolEntry};
use crate::error::RegisterError;
use crate::services::CoreServices;
use crate::skills::manage::{self, ManageArgs};
use crate::skills::view;
use crate::tools::args;

/// The `skills_list` tool's arguments.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ListArgs {
    /// Only skills of this category.
    category: Option<String>,
}

/// Build `skills_list`.
pub fn build_list(services: &Arc<CoreServices>) -> Result<ToolEntry, RegisterError> {
    let catalog = Arc::clone(&services.skills);
    ToolEntry::builder("skills_list", "skills")
        .schema(&json!({
            "description": "List available skills (name + description). Use skill_view(name) to load full content.",
            "parameters": {
                "type": "object",
                "properties": {
                    "category": {"type": "string", "description": "Optional category filter to narrow results"}
                },
                "required": []
            }
        }))
        .emoji("📚")
        .parallelism(Parallelism::Safe)
        .sync_handler(move |args, _ctx| {
            let args: ListArgs = args::parse(args)?;
            Ok(view::list(&catalog, args.category.as_deref()))
        })
        .build()
}

/// The `skill_view` tool's arguments.
#[derive(Debug, Deserialize)]
pub struct ViewArgs {
    /// The skill (or `category/skill`).
    name: String,
    /// A linked file inside the skill instead of `SKILL.md`.
    #[serde(default)]
    file_path: Option<String>,
}

/// Build `skill_view`.
pub fn build_view(services: &Arc<CoreServices>) -> Result<ToolEntry, RegisterError> {
    let catalog = Arc::clone(&services.skills);
    ToolEntry::builder("skill_view", "skills")
        .schema(&json!({
            "description": "Skills allow for loading information about specific tasks and workflows, as well as scripts and templates. Load a skill's full content or access its linked files (references, templates, scripts). First call returns SKILL.md content plus a 'linked_files' dict showing available references/templates/scripts. To access those, call again with file_path parameter.",
            "parameters": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "The skill name (use skills_list to see available skills). A path inside a skills folder ('category/skill') also works."},
                    "file_path": {"type": "string", "description": "OPTIONAL: Path to a linked file within the skill (e.g., 'references/api.md', 'templates/config.yaml', 'scripts/validate.py'). Omit to get the main SKILL.md content."}
                },
                "required": ["name"]
            }
        }))
        .emoji("📚")
        .parallelism(Parallelism::Safe)
        .sync_handler(move |args, _ctx| {
            let args: ViewArgs = args::parse(args)?;
            Ok(view::view(&catalog, &args.name, args.file_path.as_deref()))
        })
        .build()
}

fn manage_schema() -> Value {
    json!({
        "description": "Manage skills (create, update, delete). Skills are your procedural memory — reusable approaches for recurring task types. New skills go to the toolhost home's skills/ folder; existing skills can be modified wherever they live (bundled skills are copied there first).\n\nActions: create (full SKILL.md + optional category), patch (old_string/new_string — preferred for fixes), edit (full SKILL.md rewrite — major overhauls only), delete, write_file, remove_file.\n\nCreate when: complex task succeeded (5+ calls), errors overcome, user-corrected approach worked, non-trivial workflow discovered, or user asks you to remember a procedure.\nUpdate when: instructions stale/wrong, OS-specific failures, missing steps or pitfalls found during use. If you used a skill and hit issues not covered by it, patch it immediately.\n\nAfter difficult/iterative tasks, offer to save as a skill. Skip for simple one-offs. Confirm with user before creating/deleting.\n\nGood skills: trigger conditions, numbered steps with exact commands, pitfalls section, verification steps. Use skill_view() to see format examples.\n\nEvery write is security-scanned: prompt injection, secret exfiltration and destructive commands are refused with the findings; milder findings come back as warnings.",
        "parameters": {
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["create", "patch", "edit", "delete", "write_file", "remove_file"], "description": "The action to perform."},
                "name": {"type": "string", "description": "Skill name (lowercase, hyphens/underscores, max 64 chars). Must match an existing skill for patch/edit/delete/write_file/remove_file."},
                "content": {"type": "string", "description": "Full SKILL.md content (YAML frontmatter + markdown body). Required for 'create' and 'edit'. For 'edit', read the skill first with skill_view() and provide the complete updated text."},
                "old_string": {"type": "string", "description": "Text to find in the file (required for 'patch'). Must be unique unless replace_all=true. Include enough surrounding context to ensure uniqueness."},
                "new_string": {"type": "string", "description": "Replacement text (required for 'patch'). Can be empty string to delete the matched text."},
                "replace_all": {"type": "boolean", "description": "For 'patch': replace all occurrences instead of requiring a unique match (default: false)."},
                "category": {"type": "string", "description": "Optional category/domain for organizing the skill (e.g., 'devops', 'data-science', 'mlops'). Creates a subdirectory grouping. Only used with 'create'."},
                "file_path": {"type": "string", "description": "Path to a supporting file within the skill directory. For 'write_file'/'remove_file': required, must be under references/, templates/, scripts/, or assets/. For 'patch': optional, defaults to SKILL.md if omitted."},
                "file_content": {"type": "string", "description": "Content for the file. Required for 'write_file'."},
                "absorbed_into": {"type": "string", "description": "For 'delete' only: the umbrella skill this one's content was merged into (must exist), or an empty string when the skill is pruned with no forwarding target."}
            },
            "required": ["action", "name"]
        }
    })
}

/// Build `skill_manage`.
pub fn build_manage(services: &Arc<CoreServices>) -> Result<ToolEntry, RegisterError> {
    let catalog = Arc::clone(&services.skills);
    ToolEntry::builder("skill_manage", "skills")
        .schema(&manage_schema())
        .emoji("📝")
        .parallelism(Parallelism::Exclusive)
        .sync_handler(move |args, _ctx| {
            let args: ManageArgs = args::parse(args)?;
            Ok(manage::manage(&catalog, &args))
        })
        .build()
}
