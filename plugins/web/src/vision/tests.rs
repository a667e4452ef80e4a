//! `vision_analyze` against a scripted OpenAI-compatible server on 127.0.0.1.

use std::io::Cursor;

use serde_json::{Value, json};

use super::*;
use crate::test_server::{Response, Server};

fn png_file(dir: &std::path::Path, width: u32) -> String {
    let image = image::RgbImage::from_pixel(width, 8, image::Rgb([200, 10, 10]));
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, image::ImageFormat::Png).unwrap();
    let path = dir.join("red.png");
    std::fs::write(&path, out.into_inner()).unwrap();
    path.to_str().unwrap().to_string()
}

fn model() -> Server {
    Server::start(|r| {
        assert_eq!(
            (r.method.as_str(), r.path.as_str()),
            ("POST", "/v1/chat/completions")
        );
        Response::json(json!({
            "id": "c1", "object": "chat.completion",
            "choices": [{ "index": 0, "finish_reason": "stop",
                "message": { "role": "assistant", "content": "A red rectangle." } }]
        }))
    })
}

fn settings(server: &Server) -> VisionSettings {
    VisionSettings {
        base_url: format!("{}/v1", server.base),
        model: "test-vision".into(),
        max_side: 64,
        ..VisionSettings::default()
    }
}

fn analyze(vision: &VisionSettings, image_url: String) -> Value {
    let args = VisionArgs {
        image_url,
        question: "What colour is it?".into(),
    };
    run(
        args,
        vision,
        Some("sk-test"),
        &Settings {
            allow_private_networks: true,
            ..Settings::default()
        },
    )
    .unwrap()
}

#[test]
fn the_image_and_question_reach_the_model() {
    let server = model();
    let dir = tempfile::tempdir().unwrap();
    let out = analyze(&settings(&server), png_file(dir.path(), 16));
    assert_eq!(
        out,
        json!({ "success": true, "analysis": "A red rectangle." })
    );
    let requests = server.requests();
    let body = requests[0].json();
    assert_eq!(requests[0].header("authorization"), Some("Bearer sk-test"));
    assert_eq!(body["model"], "test-vision");
    assert_eq!(
        body["messages"][0]["content"][0]["text"],
        "What colour is it?"
    );
    let url = body["messages"][0]["content"][1]["image_url"]["url"]
        .as_str()
        .unwrap();
    assert!(url.starts_with("data:image/png;base64,"), "{}", &url[..40]);
}

#[test]
fn large_images_are_scaled_before_sending() {
    let server = model();
    let dir = tempfile::tempdir().unwrap();
    let out = analyze(&settings(&server), png_file(dir.path(), 640));
    assert_eq!(out["success"], true, "{out}");
    let body = server.requests()[0].json();
    let url = body["messages"][0]["content"][1]["image_url"]["url"]
        .as_str()
        .unwrap()
        .to_string();
    let data = url.split_once(";base64,").unwrap().1;
    let bytes = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, data).unwrap();
    let image = image::load_from_memory(&bytes).unwrap();
    assert_eq!(image.width(), 64);
}

#[test]
fn a_missing_file_is_an_error_and_nothing_is_sent() {
    let server = model();
    let out = analyze(&settings(&server), "/nonexistent/cat.png".into());
    assert_eq!(out["success"], false);
    assert!(
        out["error"].as_str().unwrap().contains("cannot read"),
        "{out}"
    );
    assert!(server.requests().is_empty());
}

#[test]
fn images_by_url_obey_the_address_policy() {
    let server = model();
    let args = VisionArgs {
        image_url: format!("{}/cat.png", server.base),
        question: "?".into(),
    };
    let out = run(args, &settings(&server), None, &Settings::default()).unwrap();
    assert!(out["error"].as_str().unwrap().contains("Blocked"), "{out}");
}

#[test]
fn model_errors_are_reported() {
    let server = Server::start(|_| {
        Response::new(
            401,
            "application/json",
            r#"{"error":{"message":"bad key"}}"#,
        )
    });
    let dir = tempfile::tempdir().unwrap();
    let out = analyze(&settings(&server), png_file(dir.path(), 8));
    assert!(out["error"].as_str().unwrap().contains("HTTP 401"), "{out}");
}
