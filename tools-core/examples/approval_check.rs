//! Print the detector's verdict for each line of stdin (one command per line).
//! `cargo run -p tools-core --example approval_check < commands.txt`
use std::io::BufRead;

fn main() {
    for line in std::io::stdin().lock().lines().map_while(Result::ok) {
        let verdict = tools_core::approval::detect(&line);
        let mut value = serde_json::to_value(&verdict).unwrap_or_default();
        value["command"] = serde_json::Value::String(line);
        if std::env::var_os("ALL_RULES").is_some() {
            value["rules"] = serde_json::json!(verdict.rule_keys());
        }
        println!("{value}");
    }
}
