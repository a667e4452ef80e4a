//! What the detector says about one command.

use serde::{Serialize, Serializer};

use super::rules::Rule;

/// One reason a command is dangerous.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The rule that fired.
    pub rule: &'static Rule,
    /// What exactly fired (a more specific wording of the rule's description).
    pub description: &'static str,
}

impl Finding {
    /// A finding with the rule's own description.
    pub fn new(rule: &'static Rule) -> Self {
        Finding {
            rule,
            description: rule.description,
        }
    }

    /// A finding with a more specific description.
    pub fn with(rule: &'static Rule, description: &'static str) -> Self {
        Finding { rule, description }
    }
}

/// The detector's verdict. Serializes to `{"dangerous","hardline","description","rule"}`;
/// `description` and `rule` are `null` for a benign command.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Every finding, hardline ones first, then in the order the commands appear; the first
    /// one is the verdict's `rule`/`description`.
    pub findings: Vec<Finding>,
}

impl Verdict {
    /// A benign verdict.
    pub fn benign() -> Self {
        Verdict::default()
    }

    /// Build a verdict from findings (sorted: hardline first, stable otherwise; duplicates
    /// of the same rule are kept once).
    pub fn from_findings(mut findings: Vec<Finding>) -> Self {
        let mut seen: Vec<&'static str> = Vec::with_capacity(findings.len());
        findings.retain(|f| {
            if seen.contains(&f.rule.key) {
                false
            } else {
                seen.push(f.rule.key);
                true
            }
        });
        findings.sort_by_key(|f| !f.rule.hardline);
        Verdict { findings }
    }

    /// True when any rule fired.
    pub fn dangerous(&self) -> bool {
        !self.findings.is_empty()
    }

    /// True when a hardline rule fired: nothing can let this command run.
    pub fn hardline(&self) -> bool {
        self.findings.first().is_some_and(|f| f.rule.hardline)
    }

    /// The main finding's description.
    pub fn description(&self) -> Option<&'static str> {
        self.findings.first().map(|f| f.description)
    }

    /// The main finding's rule key.
    pub fn rule(&self) -> Option<&'static str> {
        self.findings.first().map(|f| f.rule.key)
    }

    /// Every distinct rule key that fired.
    pub fn rule_keys(&self) -> Vec<String> {
        self.findings
            .iter()
            .map(|f| f.rule.key.to_string())
            .collect()
    }

    /// All descriptions joined with "; " (for prompts).
    pub fn combined_description(&self) -> String {
        let mut out = String::new();
        for (i, f) in self.findings.iter().enumerate() {
            if i > 0 {
                out.push_str("; ");
            }
            out.push_str(f.description);
        }
        out
    }
}

impl Serialize for Verdict {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("Verdict", 4)?;
        s.serialize_field("dangerous", &self.dangerous())?;
        s.serialize_field("hardline", &self.hardline())?;
        s.serialize_field("description", &self.description())?;
        s.serialize_field("rule", &self.rule())?;
        s.end()
    }
}

#[cfg(test)]
mod tests {
    use super::super::rules;
    use super::*;

    #[test]
    fn serializes_to_the_four_fields() {
        let benign = serde_json::to_value(Verdict::benign()).unwrap();
        assert_eq!(
            benign,
            serde_json::json!({"dangerous": false, "hardline": false, "description": null, "rule": null})
        );
        let v = Verdict::from_findings(vec![
            Finding::new(&rules::RM_RECURSIVE),
            Finding::new(&rules::RM_ROOT),
            Finding::new(&rules::RM_RECURSIVE),
        ]);
        assert_eq!(
            serde_json::to_value(&v).unwrap(),
            serde_json::json!({"dangerous": true, "hardline": true,
                "description": "recursive delete of root filesystem", "rule": "hardline.rm_root"})
        );
        assert_eq!(
            v.rule_keys(),
            vec!["hardline.rm_root", "fs.recursive_delete"]
        );
    }
}
