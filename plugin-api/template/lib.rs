//! my_plugin: a toolhost plugin.

use toolhost_plugin_api::prelude::*;

/// Build the plugin: its tools and hooks. `host` carries this plugin's settings
/// (`[plugins.config.my_plugin]` in config.toml).
fn plugin(host: &Host) -> Plugin {
    let greeting = host.setting("greeting").and_then(Value::as_str).unwrap_or("Hello");
    let greeting = greeting.to_string();
    Plugin::new()
        .tool(
            Tool::new("my_plugin_greet", "my_plugin", move |args, _ctx| {
                let name = args["name"].as_str().unwrap_or("world");
                Ok(json!({ "greeting": format!("{greeting}, {name}!") }))
            })
            .description("Greet someone by name")
            .parameters(json!({
                "type": "object",
                "properties": { "name": { "type": "string", "description": "Who to greet" } },
                "required": ["name"]
            }))
            .parallel_safe(true),
        )
        .pre_tool_call(|call| match call.args.get("name") {
            Some(name) if call.tool == "my_plugin_greet" && name == "nobody" => {
                PreDecision::block("my_plugin will not greet nobody")
            }
            _ => PreDecision::Allow,
        })
        .post_tool_call(|record| {
            tracing::debug!(tool = %record.tool, status = ?record.status, "call finished");
        })
}

toolhost_plugin_api::export_plugin!(plugin);
