//! The texts the model reads when the gate blocks a command: what happened, that it
//! must not retry or work around it, and what the user can do instead.
//!
//! One file for all of them (the engine decides, these say why), so the wording of
//! every refusal can be read and kept consistent in one place.

/// Hardline block.
pub fn hardline(description: &str) -> String {
    format!(
        "BLOCKED (hardline): {description}. This command is on the unconditional blocklist and cannot be \
         executed via the agent — no approval mode, allowlist or user approval can let it run. If it is \
         genuinely needed, the user must run it themselves outside the agent."
    )
}

/// Deny rule block.
pub fn deny_rule(pattern: &str) -> String {
    format!(
        "BLOCKED: this command matches the user's deny rule '{pattern}' (approvals.deny in config.toml). \
         It cannot be executed via the agent in any approval mode. Do not retry it or work around it."
    )
}

/// The user said no.
pub fn denied(reason: Option<&str>) -> String {
    let reason = reason
        .map(|r| format!(" Reason given by the user: \"{r}\"."))
        .unwrap_or_default();
    format!(
        "BLOCKED: User denied this command.{reason} The user has NOT consented to this action. Do NOT retry \
         this command, do NOT rephrase it, and do NOT attempt the same outcome via a different command. \
         Stop the current workflow and wait for the user to respond before taking any further destructive \
         or irreversible action."
    )
}

/// Nobody answered.
pub fn timeout(seconds: u64) -> String {
    format!(
        "BLOCKED: Command timed out after {seconds} s without a response from the user. Silence is not \
         consent: the user has NOT approved this action. Do NOT retry or rephrase it; wait for the user."
    )
}

/// Nobody can be asked.
pub fn no_human(description: &str, keys: &[String]) -> String {
    format!(
        "BLOCKED: Command flagged as dangerous ({description}) and no user is present to approve it \
         (non-interactive session; approvals.no_human = \"deny\"). Do NOT retry or rephrase it. If it is \
         really needed, ask the user to run it, or to allow rule(s) {} in approvals.command_allowlist.",
        keys.join(", ")
    )
}

/// A human-only rule fired and nobody can be asked.
pub fn human_only(description: &str) -> String {
    format!(
        "BLOCKED: {description}. Changing toolhost's own configuration, state or plugins \
         needs a human's approval, and no user is present to give it. Do NOT retry or work \
         around it; ask the user to make the change."
    )
}

/// Strict mode: the command is not proven read-only and nobody can be asked.
pub fn strict(description: &str) -> String {
    format!(
        "BLOCKED (strict mode): {description}. Only commands the analyser can prove \
         read-only run without a human's approval (approvals.mode = \"strict\"), and no \
         user is present to approve this one. Do NOT retry or work around it; use \
         read-only commands or ask the user."
    )
}

/// The smart approver said no and nobody can override.
pub fn smart_denied(description: &str) -> String {
    format!(
        "BLOCKED: the approval model judged this command unsafe ({description}) and no user is present to \
         override it. Do NOT retry or rephrase it."
    )
}
