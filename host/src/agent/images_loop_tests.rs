//! Images in tool results through the loop (`images.rs` in `turn.rs`): what reaches the
//! scripted server, and what the session keeps.

use serde_json::Value;

use super::scripted;
use super::turn_tests::{TINY_PNG, setup, setup_with, tool_results, turn};

/// The messages of request `n`.
fn messages(s: &super::turn_tests::Setup, n: usize) -> Vec<Value> {
    s.server.bodies()[n]["messages"].as_array().unwrap().clone()
}

#[tokio::test]
async fn an_image_result_reaches_the_model_as_an_image_part_after_the_tool_message() {
    let s = setup(vec![
        scripted::tool_calls(&[("c1", "shot", "{}")]),
        scripted::text("I see a pixel."),
    ])
    .await;
    let (c, out) = turn(&s, "look").await;
    assert_eq!(out.text, "I see a pixel.");
    let tool = &tool_results(&s, 1)[0];
    let text = tool["content"].as_str().unwrap();
    assert!(text.starts_with("a tiny image"), "{text}");
    assert!(
        text.contains("1 image(s) from this result follow"),
        "{text}"
    );
    let sent = messages(&s, 1);
    let last = sent.last().unwrap();
    assert_eq!(last["role"], "user");
    assert_eq!(last["content"][0]["text"], "Image(s) returned by shot:");
    assert_eq!(last["content"][1]["type"], "image_url");
    assert_eq!(last["content"][1]["image_url"]["url"], TINY_PNG);
    // The session does not keep the encoded image.
    let stored = s.agent.resume(&c.session_id).unwrap();
    let kept = serde_json::to_string(&stored.messages).unwrap();
    assert!(!kept.contains("iVBORw0KGgo"), "{kept}");
}

#[tokio::test]
async fn without_vision_only_the_text_is_sent() {
    let s = setup_with(
        vec![
            scripted::tool_calls(&[("c1", "shot", "{}")]),
            scripted::text("ok"),
        ],
        |model, _| model.vision = false,
    )
    .await;
    turn(&s, "look").await;
    let sent = messages(&s, 1);
    assert_eq!(sent.last().unwrap()["role"], "tool");
    assert!(!serde_json::to_string(&sent).unwrap().contains("image_url"));
    let text = sent.last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(text.contains("[model] vision = false"), "{text}");
}
