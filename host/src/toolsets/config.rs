//! The `[toolsets]` configuration section: which toolsets a run offers by default, which
//! it always withholds, and the user's own toolsets.
//!
//! ```toml
//! [toolsets]
//! enabled = ["cli", "mcp-github"]   # absent = every toolset
//! disabled = ["tts"]                # always subtracted
//!
//! [toolsets.custom.research]
//! description = "Web research with vision"
//! tools = ["web_search"]
//! includes = ["web", "vision"]
//! ```
//!
//! Hermes' form `toolsets = ["hermes-cli"]` (a bare list) is accepted too and means
//! `enabled = ["hermes-cli"]`.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

/// The `[toolsets]` section.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ToolsetsSettings {
    /// Toolsets offered when the command line names none; `None` = every toolset,
    /// `Some([])` = no tools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<Vec<String>>,
    /// Toolsets always withheld (the command line's `--disable` adds to these).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub disabled: Vec<String>,
    /// User-defined toolsets by name (`[toolsets.custom.NAME]`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub custom: BTreeMap<String, CustomToolset>,
}

/// A user-defined toolset (`[toolsets.custom.NAME]`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CustomToolset {
    /// Shown by `toolhost toolsets`.
    pub description: String,
    /// Tool names (tools not registered are simply absent from definitions).
    pub tools: Vec<String>,
    /// Other toolsets (any kind, including other custom ones) whose tools join this one.
    pub includes: Vec<String>,
}

/// The toolsets one run asks for, after merging the command line into the config.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolsetSelection {
    /// `None` = every toolset.
    pub enabled: Option<Vec<String>>,
    /// Subtracted after `enabled` is resolved.
    pub disabled: Vec<String>,
}

impl ToolsetSelection {
    /// `enabled` as `get_tool_definitions` takes it.
    pub fn enabled(&self) -> Option<&[String]> {
        self.enabled.as_deref()
    }

    /// `disabled` as `get_tool_definitions` takes it (`None` when empty).
    pub fn disabled(&self) -> Option<&[String]> {
        (!self.disabled.is_empty()).then_some(self.disabled.as_slice())
    }
}

impl ToolsetsSettings {
    /// The selection for one run: the command line's enabled list (`--toolsets`)
    /// replaces the configured one; its disabled list (`--disable`) adds to the
    /// configured one.
    pub fn selection(
        &self,
        cli_enabled: Option<Vec<String>>,
        cli_disabled: Vec<String>,
    ) -> ToolsetSelection {
        let mut disabled = self.disabled.clone();
        for name in cli_disabled {
            if !disabled.contains(&name) {
                disabled.push(name);
            }
        }
        ToolsetSelection {
            enabled: cli_enabled.or_else(|| self.enabled.clone()),
            disabled,
        }
    }
}

/// The table form. Unknown keys are ignored here and reported by the config loader
/// (`serde_ignored`), like every other section.
#[derive(Default, Deserialize)]
#[serde(default)]
struct TableForm {
    enabled: Option<Vec<String>>,
    disabled: Vec<String>,
    custom: BTreeMap<String, CustomToolset>,
}

impl<'de> Deserialize<'de> for ToolsetsSettings {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ConfigVisitor;

        impl<'de> Visitor<'de> for ConfigVisitor {
            type Value = ToolsetsSettings;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of toolset names or a table with enabled/disabled/custom")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                let enabled =
                    Vec::<String>::deserialize(de::value::SeqAccessDeserializer::new(seq))?;
                Ok(ToolsetsSettings {
                    enabled: Some(enabled),
                    ..ToolsetsSettings::default()
                })
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                let table = TableForm::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(ToolsetsSettings {
                    enabled: table.enabled,
                    disabled: table.disabled,
                    custom: table.custom,
                })
            }
        }

        deserializer.deserialize_any(ConfigVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize, Debug, Default)]
    #[serde(default)]
    struct Root {
        toolsets: ToolsetsSettings,
    }

    fn parse(text: &str) -> Result<ToolsetsSettings, toml::de::Error> {
        toml::from_str::<Root>(text).map(|r| r.toolsets)
    }

    #[test]
    fn missing_section_means_everything() {
        let config = parse("").unwrap();
        assert_eq!(config, ToolsetsSettings::default());
        assert!(config.enabled.is_none());
    }

    #[test]
    fn table_form_with_custom_toolsets() {
        let config = parse(
            r#"
            [toolsets]
            enabled = ["cli"]
            disabled = ["tts"]
            [toolsets.custom.research]
            description = "Research"
            tools = ["web_search"]
            includes = ["vision"]
            "#,
        )
        .unwrap();
        assert_eq!(config.enabled, Some(vec!["cli".to_string()]));
        assert_eq!(config.disabled, vec!["tts".to_string()]);
        let research = &config.custom["research"];
        assert_eq!(research.tools, vec!["web_search".to_string()]);
        assert_eq!(research.includes, vec!["vision".to_string()]);
    }

    #[test]
    fn hermes_list_form_means_enabled() {
        let config = parse(r#"toolsets = ["hermes-cli"]"#).unwrap();
        assert_eq!(config.enabled, Some(vec!["hermes-cli".to_string()]));
        assert!(config.custom.is_empty());
    }

    #[test]
    fn typos_are_reported_as_unknown_keys() {
        let text = "[toolsets]\nenabeld = [\"cli\"]\n[toolsets.custom.x]\ntool = [\"a\"]\n";
        let mut unknown = Vec::new();
        let de = toml::Deserializer::parse(text).unwrap();
        let root: Root =
            serde_ignored::deserialize(de, |path| unknown.push(path.to_string())).unwrap();
        assert!(root.toolsets.enabled.is_none());
        assert!(root.toolsets.custom.contains_key("x"));
        unknown.sort();
        assert_eq!(
            unknown,
            vec![
                "toolsets.custom.x.tool".to_string(),
                "toolsets.enabeld".to_string(),
            ]
        );
    }

    #[test]
    fn wrong_types_are_errors_with_a_location() {
        let err = parse("[toolsets]\nenabled = \"cli\"\n").unwrap_err();
        assert!(err.span().is_some(), "{err}");
        assert!(parse("toolsets = 3").is_err());
    }

    #[test]
    fn command_line_replaces_enabled_and_adds_disabled() {
        let config = ToolsetsSettings {
            enabled: Some(vec!["cli".into()]),
            disabled: vec!["tts".into()],
            custom: BTreeMap::new(),
        };
        let sel = config.selection(None, vec!["web".into(), "tts".into()]);
        assert_eq!(sel.enabled(), Some(&["cli".to_string()][..]));
        assert_eq!(sel.disabled, vec!["tts".to_string(), "web".to_string()]);
        let sel = config.selection(Some(vec!["file".into()]), vec![]);
        assert_eq!(sel.enabled(), Some(&["file".to_string()][..]));
        assert_eq!(
            ToolsetsSettings::default()
                .selection(None, vec![])
                .disabled(),
            None
        );
    }
}
