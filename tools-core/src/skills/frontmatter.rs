//! `SKILL.md` front matter: the YAML block between `---` fences at the top of the file
//! (the open Agent Skills format: `name`, `description`, optional `license`,
//! `compatibility`, `metadata`, ... ; docs/hermes/skills.md).
//!
//! Two entry points: [`parse`] reads leniently (a file without front matter is all body;
//! used when listing and viewing skills written by anyone), [`validate`] is strict
//! (used before the agent or an install writes a skill), with Hermes' error messages.
//! YAML values are converted to JSON so tools can return them as they are.

use serde_json::{Map, Value};
use yaml_rust2::{Yaml, YamlLoader};

/// Longest skill name (Agent Skills' limit).
pub const MAX_NAME_LENGTH: usize = 64;
/// Longest description (Agent Skills' limit).
pub const MAX_DESCRIPTION_LENGTH: usize = 1024;

/// Why a `SKILL.md` is not acceptable for writing. `Display` is the model-facing text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FrontMatterError {
    /// Nothing but whitespace.
    #[error("Content cannot be empty.")]
    Empty,
    /// The file does not start with `---`.
    #[error("SKILL.md must start with YAML frontmatter (---). See existing skills for format.")]
    NoOpeningFence,
    /// No closing `---` line.
    #[error("SKILL.md frontmatter is not closed. Ensure you have a closing '---' line.")]
    NotClosed,
    /// The YAML does not parse.
    #[error("YAML frontmatter parse error: {0}")]
    Yaml(String),
    /// The YAML is a list or a scalar.
    #[error("Frontmatter must be a YAML mapping (key: value pairs).")]
    NotMapping,
    /// `name` is missing.
    #[error("Frontmatter must include 'name' field.")]
    MissingName,
    /// `description` is missing.
    #[error("Frontmatter must include 'description' field.")]
    MissingDescription,
    /// `description` is too long.
    #[error("Description exceeds {MAX_DESCRIPTION_LENGTH} characters.")]
    DescriptionTooLong,
    /// No instructions after the front matter.
    #[error("SKILL.md must have content after the frontmatter (instructions, procedures, etc.).")]
    EmptyBody,
}

/// A parsed `SKILL.md`: its front matter as JSON and the Markdown body.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SkillDocument<'a> {
    /// The front-matter mapping (empty when there is none).
    pub fields: Map<String, Value>,
    /// Everything after the closing fence (the whole text without front matter).
    pub body: &'a str,
}

impl SkillDocument<'_> {
    /// A string field (numbers and booleans are written out).
    pub fn str_field(&self, key: &str) -> Option<String> {
        match self.fields.get(key)? {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }
}

/// Split `content` into (YAML text, body) when it has a closed front-matter block.
/// `Err` says why not (no opening fence, or not closed).
fn split(content: &str) -> Result<(&str, &str), FrontMatterError> {
    let content = content.strip_prefix('\u{feff}').unwrap_or(content);
    let Some(rest) = content.strip_prefix("---") else {
        return Err(FrontMatterError::NoOpeningFence);
    };
    // The opening fence is a line of its own.
    let rest = match rest.find('\n') {
        Some(i) if rest[..i].trim().is_empty() => &rest[i + 1..],
        _ => return Err(FrontMatterError::NoOpeningFence),
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end();
        if bare == "---" || bare == "..." {
            return Ok((&rest[..offset], &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    Err(FrontMatterError::NotClosed)
}

/// Convert a YAML value to JSON (mapping keys become strings; aliases and bad values
/// become null).
pub fn yaml_to_json(yaml: &Yaml) -> Value {
    match yaml {
        Yaml::Real(text) => text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or_else(|| Value::String(text.clone()), Value::Number),
        Yaml::Integer(i) => Value::from(*i),
        Yaml::String(s) => Value::String(s.clone()),
        Yaml::Boolean(b) => Value::Bool(*b),
        Yaml::Array(items) => Value::Array(items.iter().map(yaml_to_json).collect()),
        Yaml::Hash(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (yaml_key(k), yaml_to_json(v)))
                .collect(),
        ),
        Yaml::Alias(_) | Yaml::Null | Yaml::BadValue => Value::Null,
    }
}

fn yaml_key(key: &Yaml) -> String {
    match key {
        Yaml::String(s) | Yaml::Real(s) => s.clone(),
        Yaml::Integer(i) => i.to_string(),
        Yaml::Boolean(b) => b.to_string(),
        other => yaml_to_json(other).to_string(),
    }
}

/// Parse the YAML of a front-matter block into a mapping.
fn parse_yaml(yaml: &str) -> Result<Map<String, Value>, FrontMatterError> {
    let docs =
        YamlLoader::load_from_str(yaml).map_err(|e| FrontMatterError::Yaml(e.to_string()))?;
    match docs.into_iter().next() {
        None => Ok(Map::new()),
        Some(doc) => match yaml_to_json(&doc) {
            Value::Object(map) => Ok(map),
            Value::Null => Ok(Map::new()),
            _ => Err(FrontMatterError::NotMapping),
        },
    }
}

/// Read a `SKILL.md` leniently: without a (valid) front-matter block the whole text is
/// the body and the fields are empty. Never fails.
pub fn parse(content: &str) -> SkillDocument<'_> {
    match split(content) {
        Ok((yaml, body)) => SkillDocument {
            fields: parse_yaml(yaml).unwrap_or_else(|_| fallback_fields(yaml)),
            body,
        },
        Err(_) => SkillDocument {
            fields: Map::new(),
            body: content.strip_prefix('\u{feff}').unwrap_or(content),
        },
    }
}

/// `key: value` lines of front matter that is not valid YAML (descriptions with an
/// unquoted `: ` are common in hand-written skills).
fn fallback_fields(yaml: &str) -> Map<String, Value> {
    yaml.lines()
        .filter(|line| !line.starts_with([' ', '\t', '#', '-']))
        .filter_map(|line| line.split_once(':'))
        .map(|(k, v)| {
            let v = v.trim().trim_matches(|c| c == '"' || c == '\'');
            (k.trim().to_string(), Value::String(v.to_string()))
        })
        .filter(|(k, _)| !k.is_empty())
        .collect()
}

/// Check a `SKILL.md` before it is written: closed front matter that is a YAML mapping
/// with `name` and `description` (≤ 1024 characters), and a non-empty body.
pub fn validate(content: &str) -> Result<SkillDocument<'_>, FrontMatterError> {
    if content.trim().is_empty() {
        return Err(FrontMatterError::Empty);
    }
    let (yaml, body) = split(content)?;
    let fields = parse_yaml(yaml)?;
    if !fields.contains_key("name") {
        return Err(FrontMatterError::MissingName);
    }
    let Some(description) = fields.get("description") else {
        return Err(FrontMatterError::MissingDescription);
    };
    let description_len = match description {
        Value::String(s) => s.chars().count(),
        other => other.to_string().chars().count(),
    };
    if description_len > MAX_DESCRIPTION_LENGTH {
        return Err(FrontMatterError::DescriptionTooLong);
    }
    if body.trim().is_empty() {
        return Err(FrontMatterError::EmptyBody);
    }
    Ok(SkillDocument { fields, body })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    const GOOD: &str = "---\nname: pdf-tools\ndescription: Work with PDFs\nmetadata:\n  hermes:\n    tags: [pdf, docs]\n---\n# PDF tools\n\nSteps.\n";

    #[test]
    fn parses_fields_and_body() {
        let doc = parse(GOOD);
        assert_eq!(doc.str_field("name").as_deref(), Some("pdf-tools"));
        assert_eq!(
            doc.fields["metadata"],
            json!({"hermes": {"tags": ["pdf", "docs"]}})
        );
        assert_eq!(doc.body, "# PDF tools\n\nSteps.\n");
    }

    #[test]
    fn without_front_matter_everything_is_body() {
        let doc = parse("# Title\nText");
        assert!(doc.fields.is_empty());
        assert_eq!(doc.body, "# Title\nText");
    }

    #[test]
    fn a_leading_bom_is_ignored() {
        let text = format!("\u{feff}{GOOD}");
        assert_eq!(parse(&text).str_field("name").as_deref(), Some("pdf-tools"));
        assert!(validate(&text).is_ok());
    }

    #[test]
    fn invalid_yaml_falls_back_to_key_value_lines_when_reading() {
        let doc = parse("---\nname: x\ndescription: Use when: things happen: often\n---\nbody");
        assert_eq!(doc.str_field("name").as_deref(), Some("x"));
        assert_eq!(
            doc.str_field("description").as_deref(),
            Some("Use when: things happen: often")
        );
    }

    #[test]
    fn validation_errors() {
        let long = format!("---\nname: a\ndescription: {}\n---\nbody", "x".repeat(1025));
        let cases: &[(&str, FrontMatterError)] = &[
            ("   ", FrontMatterError::Empty),
            ("# no front matter", FrontMatterError::NoOpeningFence),
            ("---\nname: a\n", FrontMatterError::NotClosed),
            ("---\n- a\n- b\n---\nbody", FrontMatterError::NotMapping),
            (
                "---\ndescription: d\n---\nbody",
                FrontMatterError::MissingName,
            ),
            (
                "---\nname: a\n---\nbody",
                FrontMatterError::MissingDescription,
            ),
            (&long, FrontMatterError::DescriptionTooLong),
            (
                "---\nname: a\ndescription: d\n---\n  \n",
                FrontMatterError::EmptyBody,
            ),
        ];
        for (text, want) in cases {
            assert_eq!(validate(text).unwrap_err(), *want, "{text:?}");
        }
        assert!(matches!(
            validate("---\nname: [a\n---\nbody").unwrap_err(),
            FrontMatterError::Yaml(_)
        ));
        assert!(validate(GOOD).is_ok());
    }

    proptest! {
        #[test]
        fn parsing_never_panics(text in "(---\n)?[ -~\n:\\[\\]{}'\"]{0,200}(\n---\n)?[ -~\n]{0,50}") {
            let _ = parse(&text);
            let _ = validate(&text);
        }
    }
}
