//! A server's resources and prompts as `mcp__<server>__list_resources`,
//! `read_resource`, `list_prompts` and `get_prompt`, with Hermes' result shapes,
//! against the reference server-everything.

use super::mcp_common::*;
use serde_json::Value;
use toolhost_tests::{TestHome, stderr, stdout_json};

fn everything_home(extra: &str) -> TestHome {
    let home = TestHome::new();
    home.write_config(&format!(
        "[mcp_servers.everything]\ncommand = {}\n{extra}",
        toml_str(&everything())
    ));
    home
}

fn call(home: &TestHome, tool: &str, args: &str) -> Value {
    let out = home.run(&["call", tool, args], None);
    assert!(out.status.success(), "{tool}: {}", stderr(&out));
    stdout_json(&out)
}

fn schema_names(home: &TestHome) -> Vec<String> {
    let out = home.run(&["schema"], None);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout_json(&out)
        .as_array()
        .expect("definitions")
        .iter()
        .filter_map(|d| d["function"]["name"].as_str().map(str::to_string))
        .collect()
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn resources_are_listed_and_read_with_hermes_shapes() {
    require_mcp_software();
    let home = everything_home("");
    let listed = call(&home, "mcp__everything__list_resources", "{}");
    let first = &listed["resources"][0];
    for key in ["uri", "name", "description", "mimeType"] {
        assert!(first[key].is_string(), "{key}: {listed}");
    }
    let uri = "demo://resource/static/document/architecture.md";
    let read = call(
        &home,
        "mcp__everything__read_resource",
        &format!(r#"{{"uri": "{uri}"}}"#),
    );
    let text = read["result"].as_str().expect("result text");
    assert!(text.starts_with("# Everything Server"), "{read}");
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn a_text_blob_resource_reads_as_text() {
    require_mcp_software();
    let home = everything_home("");
    let read = call(
        &home,
        "mcp__everything__read_resource",
        r#"{"uri": "demo://resource/dynamic/blob/1"}"#,
    );
    let text = read["result"].as_str().expect("result text");
    assert!(text.starts_with("Resource 1:"), "{read}");
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn prompts_are_listed_and_got_with_hermes_shapes() {
    require_mcp_software();
    let home = everything_home("");
    let listed = call(&home, "mcp__everything__list_prompts", "{}");
    let args_prompt = listed["prompts"]
        .as_array()
        .expect("prompts")
        .iter()
        .find(|p| p["name"] == "args-prompt")
        .unwrap_or_else(|| panic!("no args-prompt: {listed}"));
    assert_eq!(args_prompt["arguments"][0]["name"], "city");
    assert_eq!(args_prompt["arguments"][0]["required"], true);
    let got = call(
        &home,
        "mcp__everything__get_prompt",
        r#"{"name": "args-prompt", "arguments": {"city": "Paris"}}"#,
    );
    assert_eq!(got["messages"][0]["role"], "user", "{got}");
    assert!(
        got["messages"][0]["content"]
            .as_str()
            .is_some_and(|c| c.contains("Paris")),
        "{got}"
    );
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn a_prompt_with_an_embedded_resource_shows_its_text_and_takes_numbers() {
    require_mcp_software();
    let home = everything_home("");
    let got = call(
        &home,
        "mcp__everything__get_prompt",
        r#"{"name": "resource-prompt", "arguments": {"resourceType": "Text", "resourceId": 1}}"#,
    );
    let embedded = got["messages"][1]["content"].as_str().expect("text");
    assert!(
        embedded.starts_with("[resource demo://resource/dynamic/text/1]\nResource 1"),
        "{got}"
    );
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn a_resource_link_in_a_result_names_the_tool_that_reads_it() {
    require_mcp_software();
    let home = everything_home("");
    let result = call(
        &home,
        "mcp__everything__get-resource-links",
        r#"{"count": 1}"#,
    );
    let text = result["result"].as_str().expect("result text");
    assert!(
        text.contains("read it with mcp__everything__read_resource"),
        "{result}"
    );
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn the_section_can_leave_resources_or_prompts_out() {
    require_mcp_software();
    let all = schema_names(&everything_home(""));
    for name in [
        "list_resources",
        "read_resource",
        "list_prompts",
        "get_prompt",
    ] {
        assert!(
            all.contains(&format!("mcp__everything__{name}")),
            "{name}: {all:?}"
        );
    }
    let names = schema_names(&everything_home("tools = { resources = false }\n"));
    assert!(!names.contains(&"mcp__everything__read_resource".to_string()));
    assert!(names.contains(&"mcp__everything__get_prompt".to_string()));
    let names = schema_names(&everything_home("tools = { prompts = \"no\" }\n"));
    assert!(names.contains(&"mcp__everything__read_resource".to_string()));
    assert!(!names.contains(&"mcp__everything__list_prompts".to_string()));
}
