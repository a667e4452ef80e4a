//! Resolution, selection and listing tests for the toolset catalog.

use std::collections::{BTreeMap, BTreeSet};

use tools_core::{AvailabilityCheck, Registry, ToolEntry, ToolSource};

use super::*;

fn tool(name: &str, toolset: &str) -> ToolEntry {
    ToolEntry::builder(name, toolset).build().unwrap()
}

fn registry(tools: &[(&str, &str)]) -> Registry {
    let reg = Registry::new();
    for (name, toolset) in tools {
        reg.register(tool(name, toolset));
    }
    reg
}

fn strings(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

fn sorted(names: &[&str]) -> Vec<String> {
    let set: BTreeSet<String> = names.iter().map(|s| s.to_string()).collect();
    set.into_iter().collect()
}

fn custom(entries: &[(&str, &[&str], &[&str])]) -> Toolsets {
    let mut config = ToolsetsSettings::default();
    for (name, tools, includes) in entries {
        config.custom.insert(
            name.to_string(),
            CustomToolset {
                description: String::new(),
                tools: strings(tools),
                includes: strings(includes),
            },
        );
    }
    Toolsets::from_config(&config).unwrap()
}

fn core_minus(removed: &[&str]) -> Vec<String> {
    let names: Vec<&str> = CORE_TOOLS
        .iter()
        .copied()
        .filter(|t| !removed.contains(t))
        .collect();
    sorted(&names)
}

const KANBAN: &[&str] = &[
    "kanban_show",
    "kanban_list",
    "kanban_complete",
    "kanban_block",
    "kanban_heartbeat",
    "kanban_comment",
    "kanban_create",
    "kanban_link",
    "kanban_unblock",
    "kanban_attach",
    "kanban_attach_url",
    "kanban_attachments",
];

#[test]
fn leaf_and_composite_memberships() {
    let (reg, ts) = (Registry::new(), Toolsets::new());
    let cases: &[(&str, &[&str])] = &[
        ("web", &["web_search", "web_extract"]),
        ("search", &["web_search"]),
        ("x_search", &["x_search"]),
        ("vision", &["vision_analyze"]),
        ("video", &["video_analyze"]),
        ("image_gen", &["image_generate"]),
        (
            "video_gen",
            &["video_generate", "xai_video_edit", "xai_video_extend"],
        ),
        ("computer_use", &["computer_use"]),
        ("terminal", &["terminal", "process"]),
        ("skills", &["skills_list", "skill_view", "skill_manage"]),
        ("cronjob", &["cronjob"]),
        (
            "file",
            &["read_file", "write_file", "patch", "search_files"],
        ),
        ("tts", &["text_to_speech"]),
        ("todo", &["todo"]),
        ("memory", &["memory"]),
        ("session_search", &["session_search"]),
        ("clarify", &["clarify"]),
        ("context_engine", &[]),
        (
            "project",
            &["project_list", "project_create", "project_switch"],
        ),
        ("code_execution", &["execute_code"]),
        ("delegation", &["delegate_task"]),
        (
            "homeassistant",
            &[
                "ha_list_entities",
                "ha_get_state",
                "ha_list_services",
                "ha_call_service",
            ],
        ),
        ("kanban", KANBAN),
        ("discord", &["discord"]),
        ("discord_admin", &["discord_admin"]),
        (
            "yuanbao",
            &[
                "yb_query_group_info",
                "yb_query_group_members",
                "yb_send_dm",
                "yb_search_sticker",
                "yb_send_sticker",
            ],
        ),
        ("feishu_doc", &["feishu_doc_read"]),
        (
            "feishu_drive",
            &[
                "feishu_drive_list_comments",
                "feishu_drive_list_comment_replies",
                "feishu_drive_reply_comment",
                "feishu_drive_add_comment",
            ],
        ),
        (
            "spotify",
            &[
                "spotify_playback",
                "spotify_devices",
                "spotify_queue",
                "spotify_search",
                "spotify_playlists",
                "spotify_albums",
                "spotify_library",
            ],
        ),
        (
            "debugging",
            &[
                "terminal",
                "process",
                "web_search",
                "web_extract",
                "read_file",
                "write_file",
                "patch",
                "search_files",
            ],
        ),
        (
            "safe",
            &[
                "web_search",
                "web_extract",
                "vision_analyze",
                "image_generate",
            ],
        ),
    ];
    for (name, expected) in cases {
        assert_eq!(
            ts.resolve(&reg, name),
            Some(sorted(expected)),
            "toolset {name}"
        );
    }
    let browser = ts.resolve(&reg, "browser").unwrap();
    assert_eq!(browser.len(), 13);
    assert!(browser.contains(&"web_search".to_string()));
    assert!(browser.iter().filter(|t| t.starts_with("browser_")).count() == 12);
}

#[test]
fn every_preset_and_its_hermes_alias() {
    let (reg, ts) = (Registry::new(), Toolsets::new());
    let core = core_minus(&[]);
    let api_server = core_minus(
        &[
            &[
                "read_terminal",
                "close_terminal",
                "text_to_speech",
                "clarify",
                "computer_use",
            ][..],
            KANBAN,
        ]
        .concat(),
    );
    let acp = core_minus(
        &[
            &[
                "read_terminal",
                "close_terminal",
                "text_to_speech",
                "clarify",
                "computer_use",
            ][..],
            KANBAN,
            &[
                "image_generate",
                "cronjob",
                "ha_list_entities",
                "ha_get_state",
                "ha_list_services",
                "ha_call_service",
            ],
        ]
        .concat(),
    );
    let coding = core_minus(
        &[
            &[
                "text_to_speech",
                "image_generate",
                "cronjob",
                "computer_use",
            ][..],
            KANBAN,
            &[
                "ha_list_entities",
                "ha_get_state",
                "ha_list_services",
                "ha_call_service",
            ],
        ]
        .concat(),
    );
    let with = |extra: &[&str]| {
        let mut all: Vec<&str> = CORE_TOOLS.to_vec();
        all.extend_from_slice(extra);
        sorted(&all)
    };
    let yb = [
        "yb_query_group_info",
        "yb_query_group_members",
        "yb_send_dm",
        "yb_search_sticker",
        "yb_send_sticker",
    ];
    let feishu = [
        "feishu_doc_read",
        "feishu_drive_list_comments",
        "feishu_drive_list_comment_replies",
        "feishu_drive_reply_comment",
        "feishu_drive_add_comment",
    ];
    let cases: Vec<(&str, &str, Vec<String>)> = vec![
        ("cli", "hermes-cli", core.clone()),
        ("cron", "hermes-cron", core.clone()),
        ("api-server", "hermes-api-server", api_server.clone()),
        ("acp", "hermes-acp", acp.clone()),
        (
            "webhook",
            "hermes-webhook",
            sorted(&["web_search", "web_extract", "vision_analyze", "clarify"]),
        ),
        ("telegram", "hermes-telegram", core.clone()),
        ("whatsapp", "hermes-whatsapp", core.clone()),
        ("slack", "hermes-slack", core.clone()),
        ("signal", "hermes-signal", core.clone()),
        ("bluebubbles", "hermes-bluebubbles", core.clone()),
        ("email", "hermes-email", core.clone()),
        ("mattermost", "hermes-mattermost", core.clone()),
        ("matrix", "hermes-matrix", core.clone()),
        ("dingtalk", "hermes-dingtalk", core.clone()),
        ("weixin", "hermes-weixin", core.clone()),
        ("qqbot", "hermes-qqbot", core.clone()),
        ("wecom", "hermes-wecom", core.clone()),
        ("wecom-callback", "hermes-wecom-callback", core.clone()),
        ("sms", "hermes-sms", core.clone()),
        ("feishu", "hermes-feishu", with(&feishu)),
        (
            "gateway",
            "hermes-gateway",
            with(&[&["discord", "discord_admin"][..], &feishu, &yb].concat()),
        ),
    ];
    for (name, alias, expected) in cases {
        assert_eq!(
            ts.resolve(&reg, name).as_ref(),
            Some(&expected),
            "preset {name}"
        );
        assert_eq!(
            ts.resolve(&reg, alias).as_ref(),
            Some(&expected),
            "alias {alias}"
        );
        assert_eq!(
            ts.kind_of(&reg, alias),
            Some(ToolsetKind::Preset),
            "{alias}"
        );
    }
    assert_eq!(api_server.len(), 35);
    assert_eq!(acp.len(), 29);
    assert_eq!(ts.resolve(&reg, "coding").unwrap(), coding);
    assert_eq!(coding.len(), 32);
    // Presets whose bare name is a leaf keep the hermes- name.
    assert_eq!(
        ts.resolve(&reg, "hermes-discord").unwrap(),
        with(&["discord", "discord_admin"])
    );
    assert_eq!(ts.resolve(&reg, "hermes-homeassistant").unwrap(), core);
    assert_eq!(ts.resolve(&reg, "hermes-yuanbao").unwrap(), with(&yb));
    assert_eq!(ts.kind_of(&reg, "homeassistant"), Some(ToolsetKind::Leaf));
    assert_eq!(ts.resolve(&reg, "core").unwrap(), core);
}

#[test]
fn unknown_names_resolve_to_none() {
    let (reg, ts) = (Registry::new(), Toolsets::new());
    for name in [
        "nope",
        "",
        "hermes-nope",
        "hermes-web",
        "mcp-absent",
        "all_tools",
    ] {
        assert_eq!(ts.resolve(&reg, name), None, "{name:?}");
        assert!(!ts.is_known(&reg, name));
    }
}

#[test]
fn legacy_names() {
    let (reg, ts) = (Registry::new(), Toolsets::new());
    let cases: &[(&str, usize)] = &[
        ("web_tools", 2),
        ("terminal_tools", 1),
        ("vision_tools", 1),
        ("image_tools", 1),
        ("skills_tools", 3),
        ("browser_tools", 10),
        ("cronjob_tools", 1),
        ("file_tools", 4),
        ("tts_tools", 1),
    ];
    for (name, count) in cases {
        assert_eq!(
            ts.resolve(&reg, name).map(|t| t.len()),
            Some(*count),
            "{name}"
        );
        assert_eq!(ts.kind_of(&reg, name), Some(ToolsetKind::Legacy));
    }
    assert_eq!(
        ts.resolve(&reg, "terminal_tools").unwrap(),
        strings(&["terminal"])
    );
    // A registry toolset of the same name wins over the legacy name.
    let reg = registry(&[("my_web", "web_tools")]);
    assert_eq!(ts.resolve(&reg, "web_tools").unwrap(), strings(&["my_web"]));
    assert_eq!(ts.kind_of(&reg, "web_tools"), Some(ToolsetKind::Dynamic));
}

#[test]
fn all_and_star_cover_every_toolset() {
    let reg = registry(&[("gh_issue", "mcp-github"), ("extra", "plugin-x")]);
    let ts = custom(&[("mine", &["custom_only"], &[])]);
    let all = ts.resolve(&reg, "all").unwrap();
    assert_eq!(ts.resolve(&reg, "*").unwrap(), all);
    for expected in [
        "gh_issue",
        "extra",
        "custom_only",
        "terminal",
        "spotify_search",
        "project_list",
        "x_search",
    ] {
        assert!(all.contains(&expected.to_string()), "{expected}");
    }
    // Nothing outside the union of every listed toolset.
    let listed: BTreeSet<String> = ts
        .list(&reg)
        .into_iter()
        .filter(|t| t.name != "all")
        .flat_map(|t| t.tools)
        .collect();
    assert_eq!(all.into_iter().collect::<BTreeSet<_>>(), listed);
    assert_eq!(ts.kind_of(&reg, "*"), Some(ToolsetKind::Special));
}

#[test]
fn cycles_diamonds_and_self_includes_terminate() {
    let reg = Registry::new();
    let ts = custom(&[
        ("a", &["tool_a"], &["b"]),
        ("b", &["tool_b"], &["a", "web"]),
        ("me", &["tool_me"], &["me"]),
        ("top", &[], &["left", "right"]),
        ("left", &["l"], &["bottom"]),
        ("right", &["r"], &["bottom"]),
        ("bottom", &["b0"], &["all_loop"]),
        ("all_loop", &[], &["top"]),
    ]);
    assert_eq!(
        ts.resolve(&reg, "a").unwrap(),
        sorted(&["tool_a", "tool_b", "web_search", "web_extract"])
    );
    assert_eq!(
        ts.resolve(&reg, "b").unwrap(),
        ts.resolve(&reg, "a").unwrap()
    );
    assert_eq!(ts.resolve(&reg, "me").unwrap(), strings(&["tool_me"]));
    assert_eq!(ts.resolve(&reg, "top").unwrap(), sorted(&["b0", "l", "r"]));
}

#[test]
fn includes_of_unknown_names_contribute_nothing() {
    let ts = custom(&[("c", &["x"], &["nope", "hermes-nope", "file"])]);
    let reg = Registry::new();
    assert_eq!(
        ts.resolve(&reg, "c").unwrap(),
        sorted(&["x", "read_file", "write_file", "patch", "search_files"])
    );
}

#[test]
fn a_very_long_include_chain_does_not_overflow_the_stack() {
    let mut config = ToolsetsSettings::default();
    let n = 20_000;
    for i in 0..n {
        config.custom.insert(
            format!("c{i}"),
            CustomToolset {
                description: String::new(),
                tools: vec![format!("t{i}")],
                includes: vec![format!("c{}", (i + 1) % n)],
            },
        );
    }
    let ts = Toolsets::from_config(&config).unwrap();
    let reg = Registry::new();
    assert_eq!(ts.resolve(&reg, "c0").unwrap().len(), n);
    assert_eq!(ts.diagnose(&reg).len(), 1);
}

#[test]
fn registered_tools_join_static_toolsets() {
    let reg = registry(&[
        ("read_terminal", "terminal"),
        ("web_crawl", "web"),
        ("cli_extra", "hermes-cli"),
        ("yb_extra", "hermes-yuanbao"),
        ("mine_extra", "mine"),
    ]);
    let ts = custom(&[("mine", &["t"], &[])]);
    assert_eq!(
        ts.resolve(&reg, "terminal").unwrap(),
        sorted(&["process", "read_terminal", "terminal"])
    );
    // Via the including composite too.
    assert!(
        ts.resolve(&reg, "debugging")
            .unwrap()
            .contains(&"web_crawl".to_string())
    );
    assert!(
        ts.resolve(&reg, "cli")
            .unwrap()
            .contains(&"cli_extra".to_string())
    );
    assert!(
        ts.resolve(&reg, "hermes-yuanbao")
            .unwrap()
            .contains(&"yb_extra".to_string())
    );
    assert_eq!(
        ts.resolve(&reg, "mine").unwrap(),
        sorted(&["mine_extra", "t"])
    );
    // Registered under a static name: not a separate dynamic toolset.
    let names: Vec<String> = ts.list(&reg).into_iter().map(|t| t.name).collect();
    assert!(!names.contains(&"hermes-cli".to_string()));
}

#[test]
fn dynamic_toolsets_and_registry_aliases() {
    let reg = Registry::new();
    for name in ["gh_issue", "gh_pr"] {
        reg.register(
            ToolEntry::builder(name, "mcp-github")
                .source(ToolSource::Mcp("github".into()))
                .build()
                .unwrap(),
        );
    }
    reg.register_toolset_alias("github", "mcp-github");
    // An alias that collides with a built-in name does not shadow it.
    reg.register_toolset_alias("web", "mcp-github");
    let ts = Toolsets::new();
    let expected = strings(&["gh_issue", "gh_pr"]);
    assert_eq!(ts.resolve(&reg, "mcp-github").unwrap(), expected);
    assert_eq!(ts.resolve(&reg, "github").unwrap(), expected);
    assert_eq!(ts.kind_of(&reg, "github"), Some(ToolsetKind::Dynamic));
    assert_eq!(
        ts.resolve(&reg, "web").unwrap(),
        sorted(&["web_search", "web_extract"])
    );
    let row = ts.get(&reg, "github").unwrap();
    assert_eq!(row.name, "mcp-github");
    assert_eq!(row.aliases, strings(&["github"]));
    assert_eq!(row.description, "MCP server 'github' tools");
    // Deregistering the last tool removes the toolset and its alias.
    reg.deregister("gh_issue");
    reg.deregister("gh_pr");
    assert_eq!(ts.resolve(&reg, "github"), None);
    assert_eq!(ts.resolve(&reg, "mcp-github"), None);
}

#[test]
fn custom_toolsets_may_replace_builtins_and_follow_their_alias() {
    let ts = custom(&[("cli", &["only_this"], &[])]);
    let reg = Registry::new();
    assert_eq!(ts.resolve(&reg, "cli").unwrap(), strings(&["only_this"]));
    assert_eq!(
        ts.resolve(&reg, "hermes-cli").unwrap(),
        strings(&["only_this"])
    );
    assert_eq!(ts.kind_of(&reg, "cli"), Some(ToolsetKind::Custom));
    assert_eq!(
        ts.diagnose(&reg),
        vec![ToolsetWarning::ReplacesBuiltin { name: "cli".into() }]
    );
}

#[test]
fn invalid_custom_names_are_errors() {
    for bad in ["", "all", "*", "a,b", "has space", &"x".repeat(65)] {
        let mut config = ToolsetsSettings::default();
        config
            .custom
            .insert(bad.to_string(), CustomToolset::default());
        let err = Toolsets::from_config(&config).unwrap_err();
        assert!(matches!(err, ToolsetsError::InvalidName { .. }), "{bad:?}");
    }
    let mut config = ToolsetsSettings::default();
    config
        .custom
        .insert("ok-name_1.2".into(), CustomToolset::default());
    assert!(Toolsets::from_config(&config).is_ok());
}

#[test]
fn diagnose_reports_unknown_includes_and_cycles() {
    let ts = custom(&[
        ("a", &[], &["b", "ghost"]),
        ("b", &[], &["c"]),
        ("c", &[], &["a", "web"]),
        ("fine", &[], &["a", "mcp-later"]),
    ]);
    let reg = Registry::new();
    let warnings = ts.diagnose(&reg);
    assert!(warnings.contains(&ToolsetWarning::UnknownInclude {
        toolset: "a".into(),
        include: "ghost".into()
    }));
    assert!(warnings.contains(&ToolsetWarning::UnknownInclude {
        toolset: "fine".into(),
        include: "mcp-later".into()
    }));
    let cycles: Vec<_> = warnings
        .iter()
        .filter(|w| matches!(w, ToolsetWarning::Cycle { .. }))
        .collect();
    assert_eq!(cycles.len(), 1);
    assert_eq!(
        cycles[0].to_string(),
        "custom toolsets include each other in a cycle: a -> b -> c -> a"
    );
    // Once the MCP toolset exists, its include is no longer unknown.
    let reg = registry(&[("x", "mcp-later")]);
    assert!(!ts.diagnose(&reg).iter().any(
        |w| matches!(w, ToolsetWarning::UnknownInclude { include, .. } if include == "mcp-later")
    ));
}

#[test]
fn selection_enabled_disabled_and_unknown() {
    let reg = registry(&[
        ("terminal", "terminal"),
        ("web_search", "web"),
        ("discord", "discord"),
    ]);
    let ts = Toolsets::new();
    let sel = |enabled: Option<&[&str]>, disabled: &[&str]| {
        let enabled = enabled.map(strings);
        let disabled = strings(disabled);
        ts.select(&reg, enabled.as_deref(), Some(&disabled))
    };
    // Disabling a preset removes only its non-core tools.
    let s = sel(Some(&["hermes-discord"]), &["hermes-discord"]);
    assert!(s.tools.contains("terminal"));
    assert!(!s.tools.contains("discord"));
    assert!(!s.tools.contains("discord_admin"));
    // Disabling a leaf removes all of it, even from an enabled preset.
    let s = sel(Some(&["cli"]), &["terminal"]);
    assert!(!s.tools.contains("terminal") && !s.tools.contains("process"));
    assert!(s.tools.contains("web_search"));
    // Disabling a preset made only of core tools removes nothing.
    assert_eq!(sel(Some(&["cli"]), &["webhook"]).tools.len(), 52);
    assert_eq!(sel(Some(&["cli"]), &["coding"]).tools.len(), 52);
    // Legacy names in both lists.
    let s = sel(Some(&["web_tools", "terminal_tools"]), &["terminal_tools"]);
    assert_eq!(
        s.tools,
        ["web_extract", "web_search"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    );
    // Unknown names: reported once each, in order, from both lists.
    let s = sel(Some(&["nope", "web", "nope"]), &["ghost"]);
    assert_eq!(s.unknown, strings(&["nope", "ghost"]));
    assert_eq!(
        s.tools,
        ["web_extract", "web_search"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    );
    // An empty enabled list selects nothing; None selects everything.
    assert!(sel(Some(&[]), &[]).tools.is_empty());
    let everything = sel(None, &[]).tools;
    assert!(everything.contains("discord") && everything.contains("spotify_search"));
}

#[test]
fn listing_covers_every_kind_with_resolved_tools_and_availability() {
    let reg = Registry::new();
    reg.register(tool("web_search", "web"));
    let down = AvailabilityCheck::new("down", || Err("no key".into()));
    reg.register(
        ToolEntry::builder("read_file", "file")
            .check(down)
            .build()
            .unwrap(),
    );
    reg.register(
        ToolEntry::builder("plug_tool", "plugtools")
            .source(ToolSource::Plugin("plug".into()))
            .build()
            .unwrap(),
    );
    let ts = custom(&[("research", &["web_search"], &["vision"])]);
    let rows = ts.list(&reg);
    let by_name: BTreeMap<&str, &ToolsetInfo> = rows.iter().map(|r| (r.name.as_str(), r)).collect();
    let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    let mut sorted_names = names.clone();
    sorted_names.sort();
    assert_eq!(names, sorted_names, "sorted by name");
    let kinds: BTreeSet<ToolsetKind> = rows.iter().map(|r| r.kind).collect();
    assert_eq!(kinds.len(), 7, "every kind is listed: {kinds:?}");
    assert_eq!(by_name["web"].kind, ToolsetKind::Leaf);
    assert!(by_name["web"].available);
    assert!(!by_name["file"].available, "read_file's check fails");
    assert!(!by_name["vision"].available, "nothing registered");
    assert_eq!(by_name["debugging"].kind, ToolsetKind::Composite);
    assert_eq!(by_name["cli"].aliases, strings(&["hermes-cli"]));
    assert_eq!(by_name["cli"].tools.len(), 52);
    assert_eq!(by_name["all"].aliases, strings(&["*"]));
    assert_eq!(by_name["research"].kind, ToolsetKind::Custom);
    assert_eq!(
        by_name["research"].tools,
        sorted(&["web_search", "vision_analyze"])
    );
    assert_eq!(by_name["plugtools"].kind, ToolsetKind::Dynamic);
    assert_eq!(
        by_name["plugtools"].description,
        "Plugin toolset: plugtools (plugin 'plug')"
    );
    assert_eq!(by_name["file_tools"].kind, ToolsetKind::Legacy);
    assert!(
        !names.contains(&"hermes-cli"),
        "aliases are not listed as rows"
    );
    for row in &rows {
        let mut tools = row.tools.clone();
        tools.sort();
        tools.dedup();
        assert_eq!(tools, row.tools, "{} tools sorted and unique", row.name);
    }
    let json = serde_json::to_value(by_name["cli"]).unwrap();
    assert_eq!(json["kind"], "preset");
    assert_eq!(json["aliases"][0], "hermes-cli");
    let json = serde_json::to_value(by_name["web"]).unwrap();
    assert!(json.get("aliases").is_none(), "empty aliases are omitted");
}

#[test]
fn the_catalog_can_be_shared_between_threads() {
    fn shareable<T: Send + Sync>() {}
    shareable::<Toolsets>();
    shareable::<std::sync::Arc<crate::definitions::ToolDefinitions>>();
}
