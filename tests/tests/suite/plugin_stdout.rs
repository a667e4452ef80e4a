//! Under `toolhost mcp serve` (stdio) fd 1 is the protocol: an in-process plugin that
//! prints a forged JSON-RPC answer during a call must not reach the client.

use serde_json::json;
use toolhost_tests::plugin_fixtures::add_plugin;
use toolhost_tests::{TestHome, toolhost_bin};

use super::mcp_hardening::RawServe;

#[test]
fn an_in_process_plugin_cannot_write_into_the_mcp_stream() {
    let home = TestHome::new();
    toolhost_bin();
    add_plugin(
        &home.path().join("plugins"),
        "hostile",
        "fixture_hostile",
        "",
    );
    home.write_config("[plugins.isolation]\nhostile = \"in-process\"\n");
    let mut serve = RawServe::start(&home, &["--toolsets", "hostile"]);
    for id in 1..=3 {
        serve.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": "hostile_forge", "arguments": {}}})
            .to_string(),
        );
        let answer = serve.answer();
        assert_eq!(answer["id"], id, "{answer}");
        let text = answer["result"]["content"][0]["text"].as_str().unwrap();
        assert_eq!(text, json!({"forged": false}).to_string(), "{answer}");
    }
    let err = serve.finish();
    // The plugin's print went to stderr, where stray output belongs.
    assert!(err.contains("FORGED"), "{err}");
}
