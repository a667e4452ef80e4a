//! Finding skills: the sources, in order (a later one wins on a name collision), and a
//! cache that makes listing hundreds of skills cheap.
//!
//! Sources: bundled (inside the binary) < `<home>/skills/` < `./.toolhost/skills/`
//! (opt-in, like project plugins) < each configured extra directory, so a folder of
//! skills written for another agent (`~/.claude/skills`) can be pointed at and used
//! unchanged. Inside a source a skill is any directory holding a `SKILL.md`, at any
//! depth; its first path component is its category when it is nested
//! (`devops/deploy/SKILL.md` → category `devops`). Support folders (`scripts/`,
//! `references/`, `assets/`, `templates/`) of a skill and tool folders (`.git`,
//! `node_modules`, ...) are not searched.
//!
//! The cache holds the parsed list with a stamp of every directory it walked and every
//! `SKILL.md` it read (modification time and size); a warm listing only checks those
//! stamps. Hermes re-scans after a 30 s TTL and misses in-place edits until then.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use serde_json::Value;

use super::bundled::{BUNDLED_SKILLS, BundledSkill};
use super::frontmatter::{self, MAX_DESCRIPTION_LENGTH, MAX_NAME_LENGTH};
use super::settings::{SkillsSettings, expand_tilde};

/// Directories never searched for skills.
const EXCLUDED_DIRS: &[&str] = &[
    ".git",
    ".github",
    ".hub",
    ".archive",
    ".venv",
    "venv",
    "node_modules",
    "site-packages",
    "__pycache__",
    ".tox",
    ".nox",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
];

/// A skill's support folders.
pub const SUPPORT_DIRS: &[&str] = &["references", "templates", "scripts", "assets"];

/// How much of a `SKILL.md` is read for listing.
const LIST_READ_BYTES: u64 = 8 * 1024;

/// Deepest directory nesting searched inside a source.
const MAX_DEPTH: usize = 6;

/// Where a skill comes from, lowest precedence first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SkillSource {
    /// Shipped inside toolhost.
    Bundled,
    /// `<home>/skills`.
    User,
    /// `./.toolhost/skills`.
    Project,
    /// A configured extra directory.
    Extra,
}

impl SkillSource {
    /// `bundled`, `user`, `project` or `extra`.
    pub fn as_str(self) -> &'static str {
        match self {
            SkillSource::Bundled => "bundled",
            SkillSource::User => "user",
            SkillSource::Project => "project",
            SkillSource::Extra => "extra",
        }
    }
}

/// A directory skills are read from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillRoot {
    /// Which source.
    pub source: SkillSource,
    /// The directory (may not exist).
    pub dir: PathBuf,
}

/// Where a skill's files are.
#[derive(Clone, Debug)]
pub enum SkillLocation {
    /// A directory on disk.
    Dir(PathBuf),
    /// Inside the binary.
    Bundled(&'static BundledSkill),
}

/// One skill as listed.
#[derive(Clone, Debug)]
pub struct SkillEntry {
    /// The skill's name (front matter, else its directory name).
    pub name: String,
    /// Its description (front matter, else the first line of text).
    pub description: String,
    /// The top folder it is grouped under, if nested.
    pub category: Option<String>,
    /// Which source it comes from.
    pub source: SkillSource,
    /// The source directory (`None` for bundled skills).
    pub root: Option<PathBuf>,
    /// Its path relative to the source (`devops/deploy`).
    pub rel_path: String,
    /// Its files.
    pub location: SkillLocation,
}

impl SkillEntry {
    /// The skill directory, for skills on disk.
    pub fn dir(&self) -> Option<&Path> {
        match &self.location {
            SkillLocation::Dir(dir) => Some(dir),
            SkillLocation::Bundled(_) => None,
        }
    }
}

/// Why a skill name could not be resolved. `Display` is the model-facing text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LookupError {
    /// Absolute or drive path.
    #[error("Skill name must be a relative path within the skills directory.")]
    Absolute,
    /// `..` in the name.
    #[error("Skill name cannot contain '..' path traversal components.")]
    Traversal,
    /// Nothing of that name.
    #[error("Skill '{name}' not found.")]
    NotFound {
        /// The name asked for.
        name: String,
        /// Up to 20 skill names that do exist.
        available: Vec<String>,
    },
}

/// A stamp of one path: modification time and size (`None` when missing).
type Stamp = (PathBuf, Option<(SystemTime, u64)>);

fn stamp(path: &Path) -> Stamp {
    let meta = std::fs::metadata(path).ok();
    (
        path.to_path_buf(),
        meta.map(|m| (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), m.len())),
    )
}

struct Snapshot {
    stamps: Vec<Stamp>,
    skills: Arc<Vec<SkillEntry>>,
    shadowed: Arc<Vec<SkillEntry>>,
}

/// Every skill of every source, cached.
pub struct SkillCatalog {
    roots: Vec<SkillRoot>,
    bundled: bool,
    disabled: BTreeSet<String>,
    cache: Mutex<Option<Snapshot>>,
}

impl std::fmt::Debug for SkillCatalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillCatalog")
            .field("roots", &self.roots)
            .field("bundled", &self.bundled)
            .finish_non_exhaustive()
    }
}

impl SkillCatalog {
    /// A catalog over `roots` (in precedence order, lowest first; the first `User` root
    /// is where new skills are created), with or without the bundled skills.
    pub fn new(roots: Vec<SkillRoot>, bundled: bool, disabled: BTreeSet<String>) -> Self {
        SkillCatalog {
            roots,
            bundled,
            disabled,
            cache: Mutex::new(None),
        }
    }

    /// The sources `settings` asks for: `<home>/skills`, `./.toolhost/skills` when
    /// enabled (relative to `cwd`), then the extra directories.
    pub fn from_settings(home_skills: PathBuf, settings: &SkillsSettings, cwd: &Path) -> Self {
        let mut roots = vec![SkillRoot {
            source: SkillSource::User,
            dir: home_skills,
        }];
        if settings.project_enabled() {
            roots.push(SkillRoot {
                source: SkillSource::Project,
                dir: cwd.join(".toolhost").join("skills"),
            });
        }
        for dir in &settings.extra_dirs {
            let dir = expand_tilde(dir);
            roots.push(SkillRoot {
                source: SkillSource::Extra,
                dir: if dir.is_absolute() {
                    dir
                } else {
                    cwd.join(dir)
                },
            });
        }
        Self::new(
            roots,
            settings.bundled,
            settings.disabled.iter().cloned().collect(),
        )
    }

    /// The sources, lowest precedence first (bundled not included).
    pub fn roots(&self) -> &[SkillRoot] {
        &self.roots
    }

    /// Where new skills are created: the first user root.
    pub fn user_dir(&self) -> Option<&Path> {
        self.roots
            .iter()
            .find(|r| r.source == SkillSource::User)
            .map(|r| r.dir.as_path())
    }

    /// Forget the cache (after a write; the stamps would notice too).
    pub fn invalidate(&self) {
        if let Ok(mut cache) = self.cache.lock() {
            *cache = None;
        }
    }

    /// Every visible skill (the winner of each name), sorted by category then name.
    pub fn skills(&self) -> Arc<Vec<SkillEntry>> {
        self.snapshot().0
    }

    /// Skills hidden by a later source's skill of the same name.
    pub fn shadowed(&self) -> Arc<Vec<SkillEntry>> {
        self.snapshot().1
    }

    fn snapshot(&self) -> (Arc<Vec<SkillEntry>>, Arc<Vec<SkillEntry>>) {
        let mut cache = match self.cache.lock() {
            Ok(cache) => cache,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(snapshot) = cache.as_ref()
            && snapshot
                .stamps
                .iter()
                .all(|(path, old)| stamp(path).1 == *old)
        {
            return (Arc::clone(&snapshot.skills), Arc::clone(&snapshot.shadowed));
        }
        let snapshot = self.scan();
        let out = (Arc::clone(&snapshot.skills), Arc::clone(&snapshot.shadowed));
        *cache = Some(snapshot);
        out
    }

    fn scan(&self) -> Snapshot {
        let mut stamps = Vec::new();
        let mut found: Vec<SkillEntry> = Vec::new();
        if self.bundled {
            found.extend(BUNDLED_SKILLS.iter().filter_map(bundled_entry));
        }
        for root in &self.roots {
            stamps.push(stamp(&root.dir));
            let mut in_root = Vec::new();
            walk(root, &root.dir, 0, &mut stamps, &mut in_root);
            in_root.sort_by(|a, b| a.rel_path.cmp(&b.rel_path));
            found.extend(in_root);
        }
        // Later sources win; inside one source the first (by path) wins.
        let mut winners: BTreeMap<String, SkillEntry> = BTreeMap::new();
        let mut shadowed = Vec::new();
        for entry in found {
            if self.disabled.contains(&entry.name) {
                continue;
            }
            match winners.get(&entry.name) {
                Some(existing) if existing.source == entry.source => shadowed.push(entry),
                _ => {
                    if let Some(old) = winners.insert(entry.name.clone(), entry) {
                        shadowed.push(old);
                    }
                }
            }
        }
        let mut skills: Vec<SkillEntry> = winners.into_values().collect();
        skills.sort_by(|a, b| {
            (a.category.as_deref().unwrap_or(""), &a.name)
                .cmp(&(b.category.as_deref().unwrap_or(""), &b.name))
        });
        Snapshot {
            stamps,
            skills: Arc::new(skills),
            shadowed: Arc::new(shadowed),
        }
    }

    /// Resolve `name` — a skill name, a directory name, or a path inside a source
    /// (`devops/deploy`, also written `devops:deploy`) — to the visible skill.
    pub fn find(&self, name: &str) -> Result<SkillEntry, LookupError> {
        let name = name.trim();
        check_lookup_name(name)?;
        let skills = self.skills();
        let path_form = name.replace(':', "/");
        let hit = skills
            .iter()
            .find(|s| s.name == name)
            .or_else(|| skills.iter().rev().find(|s| s.rel_path == path_form))
            .or_else(|| {
                skills.iter().rev().find(|s| {
                    Path::new(&s.rel_path)
                        .file_name()
                        .is_some_and(|dir| dir == name)
                })
            });
        match hit {
            Some(entry) => Ok(entry.clone()),
            None => Err(LookupError::NotFound {
                name: name.to_string(),
                available: skills.iter().take(20).map(|s| s.name.clone()).collect(),
            }),
        }
    }
}

/// Reject absolute paths, drive paths and `..` (a name is joined onto source dirs).
pub fn check_lookup_name(name: &str) -> Result<(), LookupError> {
    let path = Path::new(name);
    let drive = name.len() >= 2
        && name.as_bytes()[1] == b':'
        && name.as_bytes()[0].is_ascii_alphabetic()
        && name[2..].starts_with(['\\', '/']);
    if path.is_absolute() || name.starts_with('\\') || drive {
        return Err(LookupError::Absolute);
    }
    if path.components().any(|c| c == Component::ParentDir)
        || name.split(['/', '\\']).any(|p| p == "..")
    {
        return Err(LookupError::Traversal);
    }
    Ok(())
}

/// Whether the front matter's `platforms` (if any) includes this OS.
pub fn matches_platform(fields: &serde_json::Map<String, Value>) -> bool {
    let wanted: Vec<String> = match fields.get("platforms") {
        None | Some(Value::Null) => return true,
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        Some(_) => return true,
    };
    if wanted.is_empty() {
        return true;
    }
    let here = std::env::consts::OS;
    wanted.iter().any(|p| {
        let p = p.trim().to_ascii_lowercase();
        p == here || (p == "darwin" && here == "macos") || (p == "win32" && here == "windows")
    })
}

/// Name, description and whether the skill applies here, from a `SKILL.md`'s text.
fn listing_fields(text: &str, dir_name: &str) -> Option<(String, String)> {
    let doc = frontmatter::parse(text);
    if !matches_platform(&doc.fields) {
        return None;
    }
    let name: String = doc
        .str_field("name")
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| dir_name.to_string())
        .chars()
        .take(MAX_NAME_LENGTH)
        .collect();
    let mut description = doc.str_field("description").unwrap_or_default();
    if description.trim().is_empty() {
        description = doc
            .body
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with('#'))
            .unwrap_or_default()
            .to_string();
    }
    if description.chars().count() > MAX_DESCRIPTION_LENGTH {
        description = description
            .chars()
            .take(MAX_DESCRIPTION_LENGTH - 3)
            .collect::<String>()
            + "...";
    }
    Some((name, description))
}

fn bundled_entry(skill: &'static BundledSkill) -> Option<SkillEntry> {
    let (name, description) = listing_fields(skill.skill_md(), skill.dir)?;
    Some(SkillEntry {
        name,
        description,
        category: None,
        source: SkillSource::Bundled,
        root: None,
        rel_path: skill.dir.to_string(),
        location: SkillLocation::Bundled(skill),
    })
}

fn read_head(path: &Path) -> Option<String> {
    use std::io::Read;
    let file = std::fs::File::open(path).ok()?;
    let mut buf = Vec::new();
    file.take(LIST_READ_BYTES).read_to_end(&mut buf).ok()?;
    match String::from_utf8(buf) {
        Ok(text) => Some(text),
        // Cut inside a character: keep the valid prefix.
        Err(err) => {
            let valid = err.utf8_error().valid_up_to();
            let mut bytes = err.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).ok()
        }
    }
}

fn walk(
    root: &SkillRoot,
    dir: &Path,
    depth: usize,
    stamps: &mut Vec<Stamp>,
    out: &mut Vec<SkillEntry>,
) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    if depth > 0 {
        stamps.push(stamp(dir));
    }
    let mut subdirs = Vec::new();
    let mut has_skill = false;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let path = entry.path();
        if name == "SKILL.md" {
            has_skill = path.is_file();
        } else if path.is_dir() && !EXCLUDED_DIRS.contains(&name) {
            subdirs.push((name.to_string(), path));
        }
    }
    if has_skill && depth > 0 {
        let skill_md = dir.join("SKILL.md");
        stamps.push(stamp(&skill_md));
        let rel = dir.strip_prefix(&root.dir).unwrap_or(dir);
        let dir_name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if let Some((name, description)) =
            read_head(&skill_md).and_then(|t| listing_fields(&t, dir_name))
        {
            let parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.push(SkillEntry {
                name,
                description,
                category: (parts.len() >= 2).then(|| parts[0].clone()),
                source: root.source,
                root: Some(root.dir.clone()),
                rel_path: parts.join("/"),
                location: SkillLocation::Dir(dir.to_path_buf()),
            });
        }
    }
    if depth >= MAX_DEPTH {
        return;
    }
    for (name, path) in subdirs {
        if has_skill && SUPPORT_DIRS.contains(&name.as_str()) {
            continue;
        }
        walk(root, &path, depth + 1, stamps, out);
    }
}

#[cfg(test)]
#[path = "catalog_tests.rs"]
pub(crate) mod tests;
