//! `browser_click`, `browser_type`, `browser_scroll` and `browser_press`: real input
//! events (mouse at the element's centre, inserted text, key presses) rather than DOM
//! shortcuts, so pages see what a user would do.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::BrowserError;
use crate::registry::Registry;
use crate::session::Session;

/// How long an input event may wait for the page (a dialog it opened blocks the ack).
const INPUT_WAIT: Duration = Duration::from_secs(3);

/// `browser_click` arguments.
#[derive(Debug, Deserialize)]
pub struct ClickArgs {
    #[serde(rename = "ref")]
    reference: String,
}

/// `browser_type` arguments.
#[derive(Debug, Deserialize)]
pub struct TypeArgs {
    #[serde(rename = "ref")]
    reference: String,
    text: String,
}

/// `browser_scroll` arguments.
#[derive(Debug, Deserialize)]
pub struct ScrollArgs {
    direction: String,
}

/// `browser_press` arguments.
#[derive(Debug, Deserialize)]
pub struct PressArgs {
    key: String,
}

/// Send an input event; a timeout while a dialog is open is the dialog's doing, not a
/// failure.
fn input(session: &Session, method: &str, params: Value) -> Result<(), BrowserError> {
    let wait = INPUT_WAIT.min(session.timeout);
    match session.raw_call(method, params, Some(&session.page), wait) {
        Ok(_) => Ok(()),
        Err(BrowserError::Timeout { .. }) if !session.dialogs().is_empty() => Ok(()),
        Err(e) => Err(e),
    }
}

/// Click the element's centre.
pub fn click(registry: &Registry, args: ClickArgs, task: &str) -> Result<Value, BrowserError> {
    registry.with(task, false, |session| {
        let node = session.node(&args.reference)?;
        let _ = session.page_call(
            "DOM.scrollIntoViewIfNeeded",
            json!({ "backendNodeId": node }),
        );
        let quads = session.page_call("DOM.getContentQuads", json!({ "backendNodeId": node }))?;
        let Some(quad) = quads["quads"][0].as_array().filter(|q| q.len() == 8) else {
            return Err(BrowserError::Other(format!(
                "{} is not visible on the page",
                args.reference
            )));
        };
        let coord = |i: usize| quad.get(i).and_then(Value::as_f64).unwrap_or(0.0);
        let x = (coord(0) + coord(2) + coord(4) + coord(6)) / 4.0;
        let y = (coord(1) + coord(3) + coord(5) + coord(7)) / 4.0;
        let before = session.loads();
        input(
            session,
            "Input.dispatchMouseEvent",
            json!({ "type": "mouseMoved", "x": x, "y": y }),
        )?;
        for kind in ["mousePressed", "mouseReleased"] {
            input(
                session,
                "Input.dispatchMouseEvent",
                json!({ "type": kind, "x": x, "y": y, "button": "left", "clickCount": 1 }),
            )?;
        }
        session.wait_for_load(before, Duration::from_millis(300));
        Ok(json!({ "success": true, "clicked": args.reference }))
    })
}

/// Clear the field, then type.
pub fn type_text(registry: &Registry, args: TypeArgs, task: &str) -> Result<Value, BrowserError> {
    registry.with(task, false, |session| {
        let node = session.node(&args.reference)?;
        session.page_call("DOM.focus", json!({ "backendNodeId": node }))?;
        let object = session.page_call("DOM.resolveNode", json!({ "backendNodeId": node }))?;
        session.page_call(
            "Runtime.callFunctionOn",
            json!({
                "objectId": object["object"]["objectId"],
                "functionDeclaration": "function () { if ('value' in this) { this.value = ''; } else if (this.isContentEditable) { this.textContent = ''; } this.dispatchEvent(new Event('input', { bubbles: true })); }",
            }),
        )?;
        input(session, "Input.insertText", json!({ "text": args.text }))?;
        Ok(json!({ "success": true, "typed": args.text, "element": args.reference }))
    })
}

/// Scroll by most of a viewport.
pub fn scroll(registry: &Registry, args: ScrollArgs, task: &str) -> Result<Value, BrowserError> {
    let sign = match args.direction.as_str() {
        "down" => "",
        "up" => "-",
        other => {
            return Err(BrowserError::Other(format!(
                "Invalid direction '{other}'. Use 'up' or 'down'."
            )));
        }
    };
    registry.with(task, false, |session| {
        session.evaluate(&format!(
            "window.scrollBy(0, {sign}Math.round(innerHeight * 0.8))"
        ))?;
        Ok(json!({ "success": true, "scrolled": args.direction }))
    })
}

/// `(key, code, virtual key code, text)` for a key name.
fn key_info(key: &str) -> Option<(String, String, u32, String)> {
    let named = |code: &str, vk: u32, text: &str| {
        Some((key.to_string(), code.to_string(), vk, text.to_string()))
    };
    match key {
        "Enter" => named("Enter", 13, "\r"),
        "Tab" => named("Tab", 9, ""),
        "Escape" => named("Escape", 27, ""),
        "Backspace" => named("Backspace", 8, ""),
        "Delete" => named("Delete", 46, ""),
        "ArrowUp" => named("ArrowUp", 38, ""),
        "ArrowDown" => named("ArrowDown", 40, ""),
        "ArrowLeft" => named("ArrowLeft", 37, ""),
        "ArrowRight" => named("ArrowRight", 39, ""),
        "Home" => named("Home", 36, ""),
        "End" => named("End", 35, ""),
        "PageUp" => named("PageUp", 33, ""),
        "PageDown" => named("PageDown", 34, ""),
        "Space" | " " => Some((" ".into(), "Space".into(), 32, " ".into())),
        _ => {
            let mut chars = key.chars();
            let (Some(c), None) = (chars.next(), chars.next()) else {
                return None;
            };
            let upper = c.to_ascii_uppercase();
            let code = if upper.is_ascii_alphabetic() {
                format!("Key{upper}")
            } else if c.is_ascii_digit() {
                format!("Digit{c}")
            } else {
                String::new()
            };
            Some((c.to_string(), code, u32::from(upper), c.to_string()))
        }
    }
}

/// Press and release one key.
pub fn press(registry: &Registry, args: PressArgs, task: &str) -> Result<Value, BrowserError> {
    let Some((key, code, vk, text)) = key_info(&args.key) else {
        return Err(BrowserError::Other(format!(
            "unknown key {:?}: use a key name such as Enter, Tab, Escape, ArrowDown or one character",
            args.key
        )));
    };
    registry.with(task, false, |session| {
        let before = session.loads();
        let down = if text.is_empty() {
            "rawKeyDown"
        } else {
            "keyDown"
        };
        let mut event =
            json!({ "type": down, "key": key, "code": code, "windowsVirtualKeyCode": vk });
        if !text.is_empty() {
            event["text"] = json!(text);
        }
        input(session, "Input.dispatchKeyEvent", event)?;
        input(
            session,
            "Input.dispatchKeyEvent",
            json!({ "type": "keyUp", "key": key, "code": code, "windowsVirtualKeyCode": vk }),
        )?;
        session.wait_for_load(before, Duration::from_millis(300));
        Ok(json!({ "success": true, "pressed": args.key }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys() {
        let cases = [
            ("Enter", Some(13)),
            ("Tab", Some(9)),
            ("a", Some(65)),
            ("7", Some(55)),
            ("NotAKey", None),
            ("", None),
        ];
        for (key, vk) in cases {
            assert_eq!(key_info(key).map(|k| k.2), vk, "{key}");
        }
    }
}
