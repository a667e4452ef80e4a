//! Deny/rewrite rules, checked in order before every call.

use regex::Regex;
use serde::Deserialize;
use toolhost_plugin_api::{PreDecision, ToolCall, Value};

/// What a rule does when it matches.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Refuse the call.
    Deny,
    /// Merge `set` into the arguments.
    Rewrite,
}

/// One rule as written in the configuration.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    /// Tool name or glob (`*` matches any run of characters).
    pub tool: String,
    /// Argument to examine; default: all arguments as JSON text.
    #[serde(default)]
    pub arg: Option<String>,
    /// Regular expression; default: always matches.
    #[serde(default)]
    pub matches: Option<String>,
    /// What to do.
    pub action: Action,
    /// Message for `deny`.
    #[serde(default)]
    pub message: Option<String>,
    /// Keys merged into the arguments for `rewrite`.
    #[serde(default)]
    pub set: Option<serde_json::Map<String, Value>>,
}

struct Rule {
    tool: Regex,
    arg: Option<String>,
    matches: Option<Regex>,
    action: Action,
    message: String,
    set: serde_json::Map<String, Value>,
}

/// The compiled rules.
pub struct RuleSet {
    rules: Vec<Rule>,
}

fn glob(pattern: &str) -> Result<Regex, regex::Error> {
    let body = pattern
        .split('*')
        .map(regex::escape)
        .collect::<Vec<_>>()
        .join(".*");
    Regex::new(&format!("^{body}$"))
}

impl RuleSet {
    /// Compile `specs`; the error names the bad rule.
    pub fn compile(specs: &[RuleSpec]) -> Result<Self, String> {
        let mut rules = Vec::with_capacity(specs.len());
        for (i, spec) in specs.iter().enumerate() {
            let n = i + 1;
            let tool = glob(&spec.tool).map_err(|e| format!("rule {n}: tool pattern: {e}"))?;
            let matches = spec
                .matches
                .as_deref()
                .map(Regex::new)
                .transpose()
                .map_err(|e| format!("rule {n}: matches: {e}"))?;
            if spec.action == Action::Rewrite && spec.set.as_ref().is_none_or(|s| s.is_empty()) {
                return Err(format!("rule {n}: a rewrite rule needs a non-empty `set`"));
            }
            rules.push(Rule {
                tool,
                arg: spec.arg.clone(),
                matches,
                action: spec.action,
                message: spec
                    .message
                    .clone()
                    .unwrap_or_else(|| format!("blocked by policy rule {n} for {}", spec.tool)),
                set: spec.set.clone().unwrap_or_default(),
            });
        }
        Ok(RuleSet { rules })
    }

    /// The decision for `call`: the first matching deny blocks; rewrites accumulate.
    pub fn decide(&self, call: &ToolCall) -> PreDecision {
        let mut args = call.args.clone();
        let mut rewritten = false;
        for rule in &self.rules {
            if !rule.tool.is_match(&call.tool) {
                continue;
            }
            if let Some(pattern) = &rule.matches {
                let subject = match &rule.arg {
                    Some(name) => match args.get(name) {
                        Some(Value::String(text)) => text.clone(),
                        Some(other) => other.to_string(),
                        None => continue,
                    },
                    None => args.to_string(),
                };
                if !pattern.is_match(&subject) {
                    continue;
                }
            }
            match rule.action {
                Action::Deny => return PreDecision::block(rule.message.clone()),
                Action::Rewrite => {
                    if let Value::Object(map) = &mut args {
                        for (key, value) in &rule.set {
                            map.insert(key.clone(), value.clone());
                        }
                        rewritten = true;
                    }
                }
            }
        }
        if rewritten {
            PreDecision::rewrite(args)
        } else {
            PreDecision::Allow
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolhost_plugin_api::json;

    fn rules(toml_rules: Value) -> RuleSet {
        let specs: Vec<RuleSpec> = serde_json::from_value(toml_rules).unwrap();
        RuleSet::compile(&specs).unwrap()
    }

    fn call(tool: &str, args: Value) -> ToolCall {
        serde_json::from_value(json!({"tool": tool, "args": args})).unwrap()
    }

    #[test]
    fn deny_matches_argument_regex() {
        let set = rules(json!([{
            "tool": "terminal", "arg": "command", "matches": "rm\\s+-rf\\s+/",
            "action": "deny", "message": "no"
        }]));
        let cases = [
            (
                "terminal",
                json!({"command": "rm -rf /"}),
                PreDecision::block("no"),
            ),
            ("terminal", json!({"command": "ls"}), PreDecision::Allow),
            (
                "read_file",
                json!({"command": "rm -rf /"}),
                PreDecision::Allow,
            ),
            ("terminal", json!({}), PreDecision::Allow),
        ];
        for (tool, args, expected) in cases {
            assert_eq!(
                set.decide(&call(tool, args.clone())),
                expected,
                "{tool} {args}"
            );
        }
    }

    #[test]
    fn rewrites_accumulate_and_globs_match() {
        let set = rules(json!([
            {"tool": "web_*", "action": "rewrite", "set": {"safe": true}},
            {"tool": "*", "action": "rewrite", "set": {"tag": "x"}}
        ]));
        assert_eq!(
            set.decide(&call("web_search", json!({"q": "a"}))),
            PreDecision::rewrite(json!({"q": "a", "safe": true, "tag": "x"}))
        );
        assert_eq!(
            set.decide(&call("terminal", json!({}))),
            PreDecision::rewrite(json!({"tag": "x"}))
        );
    }

    #[test]
    fn bad_rules_are_reported_with_their_number() {
        let specs: Vec<RuleSpec> = serde_json::from_value(json!([
            {"tool": "a", "action": "deny"},
            {"tool": "b", "matches": "(", "action": "deny"}
        ]))
        .unwrap();
        let err = RuleSet::compile(&specs).err().unwrap();
        assert!(err.starts_with("rule 2: matches"), "{err}");
        let specs: Vec<RuleSpec> =
            serde_json::from_value(json!([{"tool": "a", "action": "rewrite"}])).unwrap();
        assert!(RuleSet::compile(&specs).is_err());
    }
}
