//! The tool declarations: names, argument schemas and descriptions, and the adapter that
//! turns a [`BrowserError`] into the `{"success": false, "error": …}` result the model
//! reads.

use std::path::PathBuf;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use toolhost_plugin_api::prelude::*;

use crate::error::BrowserError;
use crate::registry::Registry;
use crate::settings::Settings;
use crate::{inspection, interaction, navigation};

const TOOLSET: &str = "browser";

type Handler<A> = fn(&Registry, A, &str) -> Result<Value, BrowserError>;

/// Wrap a typed handler.
fn tool<A: DeserializeOwned + 'static>(
    registry: &Arc<Registry>,
    name: &str,
    handler: Handler<A>,
) -> Tool {
    let registry = Arc::clone(registry);
    Tool::new(name, TOOLSET, move |args: Value, ctx: &ToolContext<'_>| {
        let args = if args.is_null() { json!({}) } else { args };
        let args: A = serde_json::from_value(args)
            .map_err(|e| ToolError::invalid_arguments(e.to_string()))?;
        Ok(outcome(handler(&registry, args, ctx.task_id())))
    })
}

/// A result, or the error as the model should read it.
pub fn outcome(result: Result<Value, BrowserError>) -> Value {
    result.unwrap_or_else(|e| json!({ "success": false, "error": e.to_string() }))
}

fn schema(properties: Value, required: &[&str]) -> Value {
    json!({ "type": "object", "properties": properties, "required": required })
}

/// The tools, sharing one registry of browsers.
pub fn tools(registry: &Arc<Registry>, screenshots: PathBuf) -> Vec<Tool> {
    let reference = |example: &str| json!({ "type": "string", "description": format!("An element ref from the last snapshot, e.g. '{example}'") });
    let vision_registry = Arc::clone(registry);
    vec![
        tool(registry, "browser_navigate", navigation::navigate)
            .description("Open a URL in this task's browser (started on first use) and return the page title, final URL and a compact snapshot with element refs. Only http(s); private and internal addresses are refused unless allowed in the configuration. For reading a document, web_extract is cheaper; use the browser to interact with pages.")
            .parameters(schema(json!({ "url": { "type": "string", "description": "The address to open, e.g. 'https://example.com'" } }), &["url"])),
        tool(registry, "browser_snapshot", navigation::snapshot)
            .description("The current page as an accessibility-tree outline. Interactive elements carry refs like [ref=e3]; pass them as '@e3' to browser_click and browser_type. full=false (default): interactive elements and headings only; full=true: all text too. Refresh after actions that change the page.")
            .parameters(schema(json!({ "full": { "type": "boolean", "default": false, "description": "Include all page text, not only interactive elements" } }), &[])),
        tool(registry, "browser_click", interaction::click)
            .description("Click the element with this ref (from the latest snapshot) with a real mouse click at its centre.")
            .parameters(schema(json!({ "ref": reference("@e5") }), &["ref"])),
        tool(registry, "browser_type", interaction::type_text)
            .description("Clear the input with this ref, then type the text into it.")
            .parameters(schema(json!({ "ref": reference("@e3"), "text": { "type": "string", "description": "The text to type" } }), &["ref", "text"])),
        tool(registry, "browser_scroll", interaction::scroll)
            .description("Scroll the page by most of a screen, up or down, to reveal more content.")
            .parameters(schema(json!({ "direction": { "type": "string", "enum": ["up", "down"], "description": "Which way to scroll" } }), &["direction"])),
        tool(registry, "browser_back", navigation::back)
            .description("Go back to the previous page in this browser's history."),
        tool(registry, "browser_press", interaction::press)
            .description("Press one key in the page: Enter (e.g. to submit a form), Tab, Escape, arrows, Backspace, Home/End, PageUp/PageDown, or a single character.")
            .parameters(schema(json!({ "key": { "type": "string", "description": "The key, e.g. 'Enter', 'Tab', 'Escape', 'ArrowDown'" } }), &["key"])),
        tool(registry, "browser_get_images", inspection::images)
            .description("List the page's images: URL, alt text and natural size."),
        tool(registry, "browser_console", inspection::console)
            .description("The page's console messages and uncaught JavaScript errors since it opened (or the last clear). With 'expression', evaluate that JavaScript in the page instead and return its JSON value.")
            .parameters(schema(json!({
                "clear": { "type": "boolean", "default": false, "description": "Empty the buffers after reading" },
                "expression": { "type": "string", "description": "JavaScript to evaluate in the page, e.g. 'document.title'" }
            }), &[])),
        tool(registry, "browser_dialog", inspection::dialog)
            .description("Answer the open JavaScript dialog (alert, confirm, prompt, beforeunload). Open dialogs are listed as pending_dialogs by browser_snapshot and browser_navigate.")
            .parameters(schema(json!({
                "action": { "type": "string", "enum": ["accept", "dismiss"], "description": "'accept' presses OK (a prompt returns prompt_text); 'dismiss' presses Cancel" },
                "prompt_text": { "type": "string", "description": "The answer to a prompt() dialog" },
                "dialog_id": { "type": "string", "description": "The id of the dialog to answer, from pending_dialogs" }
            }), &["action"])),
        tool(registry, "browser_cdp", inspection::cdp)
            .description("Call a Chrome DevTools Protocol method (power users): browser-level without target_id, or on a target from Target.getTargets. Only methods on an allowlist (page scripting, DOM, input, screenshots, navigation, emulation) are passed on; others are refused with the reason. Every request the browser makes obeys the navigation address policy; downloads go to this task's download folder; file uploads only from the workspace.")
            .parameters(schema(json!({
                "method": { "type": "string", "description": "The CDP method, e.g. 'Target.getTargets' or 'Runtime.evaluate'" },
                "params": { "type": "object", "additionalProperties": true, "description": "The method's parameters ({} when none)" },
                "target_id": { "type": "string", "description": "A target id (Target.getTargets' targetId) to run a page-level method on" },
                "frame_id": { "type": "string", "description": "Not supported here (use target_id)" },
                "timeout": { "type": "number", "default": 30, "description": "Seconds to wait (1 to 300)" }
            }), &["method"])),
        Tool::new("browser_vision", TOOLSET, move |args: Value, ctx: &ToolContext<'_>| {
            let args: inspection::VisionArgs = serde_json::from_value(args)
                .map_err(|e| ToolError::invalid_arguments(e.to_string()))?;
            Ok(outcome(inspection::vision(&vision_registry, args, ctx.task_id(), &screenshots)))
        })
        .description("Take a screenshot of the current page to answer a visual question (layout, CAPTCHAs, what the text snapshot misses). A vision model answers the question about the screenshot; the screenshot is saved and its path returned.")
        .parameters(schema(json!({
            "question": { "type": "string", "description": "What you want to know about the page's appearance" },
            "annotate": { "type": "boolean", "default": false, "description": "Overlay ref labels on interactive elements (not supported yet)" }
        }), &["question"])),
    ]
}

/// The plugin: its settings, a registry of browsers and the tools.
pub fn plugin(host: &Host) -> Result<Plugin, serde_json::Error> {
    let mut settings: Settings = host.settings()?;
    settings.home = Some(host.home().to_path_buf());
    let probe = settings.clone();
    let registry = Registry::new(settings);
    let screenshots = host.home().join("browser_screenshots");
    let mut plugin = Plugin::new();
    for tool in tools(&registry, screenshots) {
        let probe = probe.clone();
        plugin = plugin.tool(tool.emoji("🌐").check(move || {
            if probe.cdp_url.is_some() || probe.chromium_binary().is_some() {
                Ok(())
            } else {
                Err(BrowserError::NoChromium.to_string())
            }
        }));
    }
    Ok(plugin)
}
