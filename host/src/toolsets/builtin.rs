//! The built-in toolset table: Hermes' leaf toolsets, composites, platform presets and
//! legacy names, with Hermes' exact memberships (docs/hermes/toolsets-and-definitions.md,
//! sections 2–3).
//!
//! Membership is by tool *name*: a built-in toolset may name tools nobody registered
//! (they are simply absent from definitions). Tools registered under a built-in
//! toolset's name join it at resolution time (see `catalog.rs`).
//!
//! Presets are named without Hermes' `hermes-` prefix (`cli`, `api-server`, ...) and
//! accept `hermes-<name>` as an alias, except where the bare name is already a leaf
//! toolset (`discord`, `homeassistant`, `yuanbao`): those presets keep the prefixed name.

use super::ToolsetKind;

/// Hermes' core tools (`_HERMES_CORE_TOOLS`, 52 names, in Hermes' order). Every
/// messaging preset offers exactly these; disabling a preset never removes them.
#[rustfmt::skip]
pub const CORE_TOOLS: &[&str] = &[
    "web_search", "web_extract", "terminal", "process", "read_terminal", "close_terminal",
    "read_file", "write_file", "patch", "search_files", "vision_analyze", "image_generate",
    "skills_list", "skill_view", "skill_manage", "browser_navigate", "browser_snapshot",
    "browser_click", "browser_type", "browser_scroll", "browser_back", "browser_press",
    "browser_get_images", "browser_vision", "browser_console", "browser_cdp",
    "browser_dialog", "text_to_speech", "todo", "memory", "session_search", "clarify",
    "execute_code", "delegate_task", "cronjob", "ha_list_entities", "ha_get_state",
    "ha_list_services", "ha_call_service", "kanban_show", "kanban_list", "kanban_complete",
    "kanban_block", "kanban_heartbeat", "kanban_comment", "kanban_create", "kanban_link",
    "kanban_unblock", "kanban_attach", "kanban_attach_url", "kanban_attachments",
    "computer_use",
];

/// One built-in toolset.
#[derive(Clone, Copy, Debug)]
pub struct BuiltinToolset {
    /// Canonical name.
    pub name: &'static str,
    /// Leaf, composite, preset or special.
    pub kind: ToolsetKind,
    /// Shown by `toolhost toolsets`.
    pub description: &'static str,
    /// The 52 [`CORE_TOOLS`] are members too.
    pub with_core: bool,
    /// Direct members (besides the core tools when `with_core`).
    pub tools: &'static [&'static str],
    /// Toolsets whose members are members too (resolved recursively).
    pub includes: &'static [&'static str],
    /// `hermes-<name>` is accepted as an alias (Hermes configs carry over).
    pub hermes_alias: bool,
}

impl BuiltinToolset {
    /// Direct members: the core tools (when `with_core`) then `tools`.
    pub fn direct_tools(&self) -> impl Iterator<Item = &'static str> + 'static {
        let core: &'static [&'static str] = if self.with_core { CORE_TOOLS } else { &[] };
        core.iter().chain(self.tools.iter()).copied()
    }

    /// Disabling this toolset removes only its non-core tools (Hermes' rule for
    /// `hermes-*` bundles and postures).
    pub fn keeps_core_when_disabled(&self) -> bool {
        self.kind == ToolsetKind::Preset
    }
}

const fn leaf(
    name: &'static str,
    description: &'static str,
    tools: &'static [&'static str],
) -> BuiltinToolset {
    BuiltinToolset {
        name,
        kind: ToolsetKind::Leaf,
        description,
        with_core: false,
        tools,
        includes: &[],
        hermes_alias: false,
    }
}

const fn composite(
    name: &'static str,
    description: &'static str,
    tools: &'static [&'static str],
    includes: &'static [&'static str],
) -> BuiltinToolset {
    BuiltinToolset {
        name,
        kind: ToolsetKind::Composite,
        description,
        with_core: false,
        tools,
        includes,
        hermes_alias: false,
    }
}

/// A platform preset offering the core tools plus `extra`.
const fn core_preset(
    name: &'static str,
    description: &'static str,
    extra: &'static [&'static str],
) -> BuiltinToolset {
    BuiltinToolset {
        name,
        kind: ToolsetKind::Preset,
        description,
        with_core: true,
        tools: extra,
        includes: &[],
        hermes_alias: !is_hermes_prefixed(name),
    }
}

/// A platform preset with its own tool list.
const fn listed_preset(
    name: &'static str,
    description: &'static str,
    tools: &'static [&'static str],
) -> BuiltinToolset {
    BuiltinToolset {
        name,
        kind: ToolsetKind::Preset,
        description,
        with_core: false,
        tools,
        includes: &[],
        hermes_alias: !is_hermes_prefixed(name),
    }
}

const fn is_hermes_prefixed(name: &str) -> bool {
    let (name, prefix) = (name.as_bytes(), b"hermes-");
    if name.len() < prefix.len() {
        return false;
    }
    let mut i = 0;
    while i < prefix.len() {
        if name[i] != prefix[i] {
            return false;
        }
        i += 1;
    }
    true
}

#[rustfmt::skip]
const HA_TOOLS: &[&str] = &[
    "ha_list_entities", "ha_get_state", "ha_list_services", "ha_call_service",
];

#[rustfmt::skip]
const KANBAN_TOOLS: &[&str] = &[
    "kanban_show", "kanban_list", "kanban_complete", "kanban_block", "kanban_heartbeat",
    "kanban_comment", "kanban_create", "kanban_link", "kanban_unblock", "kanban_attach",
    "kanban_attach_url", "kanban_attachments",
];

#[rustfmt::skip]
const YUANBAO_TOOLS: &[&str] = &[
    "yb_query_group_info", "yb_query_group_members", "yb_send_dm", "yb_search_sticker",
    "yb_send_sticker",
];

#[rustfmt::skip]
const FEISHU_DRIVE_TOOLS: &[&str] = &[
    "feishu_drive_list_comments", "feishu_drive_list_comment_replies",
    "feishu_drive_reply_comment", "feishu_drive_add_comment",
];

#[rustfmt::skip]
const FEISHU_PRESET_EXTRA: &[&str] = &[
    "feishu_doc_read", "feishu_drive_list_comments", "feishu_drive_list_comment_replies",
    "feishu_drive_reply_comment", "feishu_drive_add_comment",
];

#[rustfmt::skip]
const SPOTIFY_TOOLS: &[&str] = &[
    "spotify_playback", "spotify_devices", "spotify_queue", "spotify_search",
    "spotify_playlists", "spotify_albums", "spotify_library",
];

/// `browser`: the 12 browser tools plus `web_search` (for finding URLs).
#[rustfmt::skip]
const BROWSER_TOOLSET: &[&str] = &[
    "browser_navigate", "browser_snapshot", "browser_click", "browser_type",
    "browser_scroll", "browser_back", "browser_press", "browser_get_images",
    "browser_vision", "browser_console", "browser_cdp", "browser_dialog", "web_search",
];

/// `coding` posture (32 tools).
#[rustfmt::skip]
const CODING_TOOLS: &[&str] = &[
    "web_search", "web_extract", "terminal", "process", "read_terminal", "close_terminal",
    "read_file", "write_file", "patch", "search_files", "vision_analyze", "skills_list",
    "skill_view", "skill_manage", "browser_navigate", "browser_snapshot", "browser_click",
    "browser_type", "browser_scroll", "browser_back", "browser_press", "browser_get_images",
    "browser_vision", "browser_console", "browser_cdp", "browser_dialog", "todo", "memory",
    "session_search", "clarify", "execute_code", "delegate_task",
];

/// `acp` (editor integrations, 29 tools: no clarify, tts, image, cron).
#[rustfmt::skip]
const ACP_TOOLS: &[&str] = &[
    "web_search", "web_extract", "terminal", "process", "read_file", "write_file", "patch",
    "search_files", "vision_analyze", "skills_list", "skill_view", "skill_manage",
    "browser_navigate", "browser_snapshot", "browser_click", "browser_type",
    "browser_scroll", "browser_back", "browser_press", "browser_get_images",
    "browser_vision", "browser_console", "browser_cdp", "browser_dialog", "todo", "memory",
    "session_search", "execute_code", "delegate_task",
];

/// `api-server` (35 tools: no clarify, tts, kanban).
#[rustfmt::skip]
const API_SERVER_TOOLS: &[&str] = &[
    "web_search", "web_extract", "terminal", "process", "read_file", "write_file", "patch",
    "search_files", "vision_analyze", "image_generate", "skills_list", "skill_view",
    "skill_manage", "browser_navigate", "browser_snapshot", "browser_click", "browser_type",
    "browser_scroll", "browser_back", "browser_press", "browser_get_images",
    "browser_vision", "browser_console", "browser_cdp", "browser_dialog", "todo", "memory",
    "session_search", "execute_code", "delegate_task", "cronjob", "ha_list_entities",
    "ha_get_state", "ha_list_services", "ha_call_service",
];

/// `webhook`: payloads are untrusted, so no file or terminal access.
const WEBHOOK_TOOLS: &[&str] = &["web_search", "web_extract", "vision_analyze", "clarify"];

/// Every built-in toolset except `all`/`*` (handled by the catalog).
#[rustfmt::skip]
pub const BUILTIN_TOOLSETS: &[BuiltinToolset] = &[
    // Leaf toolsets.
    leaf("web", "Web search and page extraction", &["web_search", "web_extract"]),
    leaf("search", "Web search only (no page extraction)", &["web_search"]),
    leaf("x_search", "Search posts on X (Twitter); needs xAI credentials", &["x_search"]),
    leaf("vision", "Image analysis", &["vision_analyze"]),
    leaf("video", "Video analysis (opt-in)", &["video_analyze"]),
    leaf("image_gen", "Image generation", &["image_generate"]),
    leaf("video_gen", "Video generation, editing and extension",
         &["video_generate", "xai_video_edit", "xai_video_extend"]),
    leaf("computer_use", "Background desktop control", &["computer_use"]),
    leaf("terminal", "Command execution and background process management", &["terminal", "process"]),
    leaf("skills", "List, read and manage skill documents", &["skills_list", "skill_view", "skill_manage"]),
    leaf("browser", "Browser automation, with web search for finding URLs", BROWSER_TOOLSET),
    leaf("cronjob", "Scheduled task management", &["cronjob"]),
    leaf("file", "Read, write, patch and search files", &["read_file", "write_file", "patch", "search_files"]),
    leaf("tts", "Text to speech", &["text_to_speech"]),
    leaf("todo", "Task planning and tracking", &["todo"]),
    leaf("memory", "Persistent memory across sessions", &["memory"]),
    leaf("context_engine", "Tools provided by the active context engine (none built in)", &[]),
    leaf("session_search", "Search past conversations", &["session_search"]),
    leaf("project", "Desktop projects (GUI sessions only)", &["project_list", "project_create", "project_switch"]),
    leaf("clarify", "Ask the user a clarifying question", &["clarify"]),
    leaf("code_execution", "Run scripts that call tools programmatically", &["execute_code"]),
    leaf("delegation", "Delegate subtasks to subagents", &["delegate_task"]),
    leaf("homeassistant", "Home Assistant control and monitoring", HA_TOOLS),
    leaf("kanban", "Kanban multi-agent coordination", KANBAN_TOOLS),
    leaf("discord", "Discord read and participate tools", &["discord"]),
    leaf("discord_admin", "Discord server management", &["discord_admin"]),
    leaf("yuanbao", "Yuanbao group, member, DM and sticker tools", YUANBAO_TOOLS),
    leaf("feishu_doc", "Read Feishu/Lark documents", &["feishu_doc_read"]),
    leaf("feishu_drive", "Feishu/Lark document comments", FEISHU_DRIVE_TOOLS),
    leaf("spotify", "Spotify playback, search, playlists and library", SPOTIFY_TOOLS),
    // Scenario composites.
    composite("debugging", "Debugging: terminal, web and file tools", &["terminal", "process"], &["web", "file"]),
    composite("safe", "Web, vision and image generation; no terminal", &[], &["web", "vision", "image_gen"]),
    // Posture (a preset: disabling it keeps the core tools).
    BuiltinToolset {
        name: "coding",
        kind: ToolsetKind::Preset,
        description: "Coding posture: files, terminal, web, browser, skills, planning, delegation",
        with_core: false,
        tools: CODING_TOOLS,
        includes: &[],
        hermes_alias: false,
    },
    // Platform presets.
    core_preset("cli", "Interactive command line: all core tools", &[]),
    core_preset("cron", "Scheduled jobs: same core tools as the command line", &[]),
    listed_preset("api-server", "OpenAI-compatible API server: no interactive tools", API_SERVER_TOOLS),
    listed_preset("acp", "Editor integrations (ACP): coding tools, no interactive UI", ACP_TOOLS),
    listed_preset("webhook", "Webhook events: web and vision only (payloads are untrusted)", WEBHOOK_TOOLS),
    core_preset("telegram", "Telegram bot: core tools", &[]),
    core_preset("hermes-discord", "Discord bot: core tools plus Discord tools", &["discord", "discord_admin"]),
    core_preset("whatsapp", "WhatsApp bot: core tools", &[]),
    core_preset("slack", "Slack bot: core tools", &[]),
    core_preset("signal", "Signal bot: core tools", &[]),
    core_preset("bluebubbles", "iMessage via BlueBubbles: core tools", &[]),
    core_preset("hermes-homeassistant", "Home Assistant bot: core tools", &[]),
    core_preset("email", "Email bot: core tools", &[]),
    core_preset("mattermost", "Mattermost bot: core tools", &[]),
    core_preset("matrix", "Matrix bot: core tools", &[]),
    core_preset("dingtalk", "DingTalk bot: core tools", &[]),
    core_preset("feishu", "Feishu/Lark bot: core tools plus document tools", FEISHU_PRESET_EXTRA),
    core_preset("weixin", "Weixin bot: core tools", &[]),
    core_preset("qqbot", "QQ bot: core tools", &[]),
    core_preset("wecom", "WeCom bot: core tools", &[]),
    core_preset("wecom-callback", "WeCom callback app: core tools", &[]),
    core_preset("hermes-yuanbao", "Yuanbao bot: core tools plus Yuanbao tools", YUANBAO_TOOLS),
    core_preset("sms", "SMS bot: core tools", &[]),
    BuiltinToolset {
        name: "gateway",
        kind: ToolsetKind::Preset,
        description: "Messaging gateway: the union of every messaging preset",
        with_core: false,
        tools: &[],
        includes: &[
            "telegram", "hermes-discord", "whatsapp", "slack", "signal", "bluebubbles",
            "hermes-homeassistant", "email", "sms", "mattermost", "matrix", "dingtalk",
            "feishu", "wecom", "wecom-callback", "weixin", "qqbot", "webhook", "hermes-yuanbao",
        ],
        hermes_alias: true,
    },
    // Special sets.
    BuiltinToolset {
        name: "core",
        kind: ToolsetKind::Special,
        description: "The core tools every messaging preset shares",
        with_core: true,
        tools: &[],
        includes: &[],
        hermes_alias: false,
    },
];

/// Description of the special set `all` (alias `*`).
pub const ALL_DESCRIPTION: &str = "Every tool of every toolset";

/// Hermes' legacy `<name>_tools` names (`_LEGACY_TOOLSET_MAP`), consulted only when a
/// name is nothing else.
#[rustfmt::skip]
pub const LEGACY_TOOLSETS: &[(&str, &[&str])] = &[
    ("web_tools", &["web_search", "web_extract"]),
    ("terminal_tools", &["terminal"]),
    ("vision_tools", &["vision_analyze"]),
    ("image_tools", &["image_generate"]),
    ("skills_tools", &["skills_list", "skill_view", "skill_manage"]),
    ("browser_tools", &[
        "browser_navigate", "browser_snapshot", "browser_click", "browser_type",
        "browser_scroll", "browser_back", "browser_press", "browser_get_images",
        "browser_vision", "browser_console",
    ]),
    ("cronjob_tools", &["cronjob"]),
    ("file_tools", &["read_file", "write_file", "patch", "search_files"]),
    ("tts_tools", &["text_to_speech"]),
];

/// The built-in toolset named `name` (canonical name or `hermes-` alias).
pub fn builtin(name: &str) -> Option<&'static BuiltinToolset> {
    if let Some(found) = BUILTIN_TOOLSETS.iter().find(|t| t.name == name) {
        return Some(found);
    }
    let bare = name.strip_prefix("hermes-")?;
    BUILTIN_TOOLSETS
        .iter()
        .find(|t| t.hermes_alias && t.name == bare)
}

/// The legacy name's tools.
pub fn legacy(name: &str) -> Option<&'static [&'static str]> {
    LEGACY_TOOLSETS
        .iter()
        .find(|(legacy, _)| *legacy == name)
        .map(|(_, tools)| *tools)
}

/// True for one of the 52 core tools.
pub fn is_core_tool(name: &str) -> bool {
    CORE_TOOLS.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn core_list_has_52_unique_names() {
        let unique: BTreeSet<_> = CORE_TOOLS.iter().collect();
        assert_eq!(CORE_TOOLS.len(), 52);
        assert_eq!(unique.len(), 52);
    }

    #[test]
    fn names_are_unique_and_aliases_never_shadow_a_name() {
        let names: BTreeSet<_> = BUILTIN_TOOLSETS.iter().map(|t| t.name).collect();
        assert_eq!(names.len(), BUILTIN_TOOLSETS.len());
        for t in BUILTIN_TOOLSETS.iter().filter(|t| t.hermes_alias) {
            let alias = format!("hermes-{}", t.name);
            assert!(!names.contains(alias.as_str()), "{alias} shadows a toolset");
        }
    }

    #[test]
    fn every_include_names_a_builtin() {
        for t in BUILTIN_TOOLSETS {
            for inc in t.includes {
                assert!(builtin(inc).is_some(), "{} includes unknown {inc}", t.name);
            }
        }
    }

    #[test]
    fn preset_sizes_match_hermes() {
        let size = |name: &str| {
            builtin(name)
                .map(|t| t.direct_tools().collect::<BTreeSet<_>>().len())
                .unwrap_or(0)
        };
        assert_eq!(size("api-server"), 35);
        assert_eq!(size("acp"), 29);
        assert_eq!(size("coding"), 32);
        assert_eq!(size("webhook"), 4);
        assert_eq!(size("cli"), 52);
        assert_eq!(size("hermes-discord"), 54);
        assert_eq!(size("feishu"), 57);
        assert_eq!(size("hermes-yuanbao"), 57);
        assert_eq!(size("browser"), 13);
        let browser_core: BTreeSet<_> = CORE_TOOLS
            .iter()
            .filter(|t| t.starts_with("browser_"))
            .collect();
        assert_eq!(browser_core.len(), 12);
        assert!(browser_core.iter().all(|t| BROWSER_TOOLSET.contains(t)));
        assert!(BROWSER_TOOLSET.contains(&"web_search"));
    }

    #[test]
    fn hermes_prefix_aliases_resolve() {
        assert_eq!(builtin("hermes-cli").map(|t| t.name), Some("cli"));
        assert_eq!(
            builtin("hermes-api-server").map(|t| t.name),
            Some("api-server")
        );
        assert_eq!(builtin("hermes-gateway").map(|t| t.name), Some("gateway"));
        // The bare name of a colliding preset is the leaf.
        assert_eq!(builtin("discord").map(|t| t.kind), Some(ToolsetKind::Leaf));
        assert_eq!(
            builtin("hermes-discord").map(|t| t.kind),
            Some(ToolsetKind::Preset)
        );
        // Leaves take no hermes- alias.
        assert!(builtin("hermes-web").is_none());
        assert!(builtin("hermes-coding").is_none());
    }
}
