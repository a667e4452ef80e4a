//! `clarify` (toolset `clarify`): ask the user a question, open-ended or with up to four
//! choices, through [`CoreServices::prompter`] (the terminal by default).
//!
//! Hermes' behaviour: `question` (required) and `choices` (≤ 4; dict-shaped choices
//! unwrapped to their label; more than four trimmed; an empty list means open-ended);
//! result `{"question", "choices_offered", "user_response"}`; after the timeout
//! (`[clarify] timeout`, 120 s) the model is told to use its own judgement. The tool is
//! never run in parallel with anything (an interactive barrier).
//!
//! Difference: in Hermes clarify is an agent-loop tool answered by the UI; here it is a
//! registry tool with an injectable prompter. Without a terminal (stdin not a TTY) or
//! another prompter, the result is a clear error telling the model to decide itself or
//! ask in its reply — Hermes says only "not available in this execution context".

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::context::ToolContext;
use crate::entry::{Parallelism, ToolEntry};
use crate::error::{RegisterError, ToolError};
use crate::prompter::{PromptAnswer, PromptError, PromptRequest};
use crate::result::tool_error;
use crate::services::CoreServices;
use crate::tools::args::{self, Given, lenient};

/// Most predefined choices offered (the terminal adds "Other").
pub const MAX_CHOICES: usize = 4;

/// What the model is told when nobody answered in time.
const TIMED_OUT_RESPONSE: &str = "The user did not provide a response within the time \
    limit. Use your best judgement to make the choice and proceed.";

fn schema() -> Value {
    json!({
        "description": "Ask the user a question when you need clarification, feedback, or a \
            decision before proceeding. Supports two modes:\n\n1. **Multiple choice** — \
            provide up to 4 choices. The user picks one or types their own answer via a 5th \
            'Other' option.\n2. **Open-ended** — omit choices entirely. The user types a \
            free-form response.\n\nCRITICAL: when you are offering options, put each option \
            ONLY in the `choices` array — NEVER enumerate the options inside the `question` \
            text. Right: question='Which deployment target?', choices=['staging', 'prod']. \
            Wrong: question='Which target? 1) staging 2) prod', choices=[].\n\nUse this tool \
            when:\n- The task is ambiguous and you need the user to choose an approach\n- You \
            want post-task feedback ('How did that work out?')\n- A decision has meaningful \
            trade-offs the user should weigh in on\n\nDo NOT use this tool for simple yes/no \
            confirmation of dangerous commands (the terminal tool handles that). Prefer \
            making a reasonable default choice yourself when the decision is low-stakes.",
        "parameters": {
            "type": "object",
            "properties": {
                "question": {
                    "type": "string",
                    "description": "The question itself, and ONLY the question (e.g. 'Which \
                        deployment target?'). Do NOT embed the answer options here — pass them \
                        as separate elements in `choices`."
                },
                "choices": {
                    "type": "array",
                    "items": {"type": "string"},
                    "maxItems": MAX_CHOICES,
                    "description": "REQUIRED whenever you are presenting selectable options: \
                        each distinct option is its own array element (up to 4). The user can \
                        always type another answer instead. Omit this parameter entirely ONLY \
                        for a genuinely open-ended free-text question."
                }
            },
            "required": ["question"]
        }
    })
}

/// Build the `clarify` tool.
pub fn build(services: &Arc<CoreServices>) -> Result<ToolEntry, RegisterError> {
    let svc = Arc::clone(services);
    ToolEntry::builder("clarify", "clarify")
        .schema(&schema())
        .emoji("❓")
        .parallelism(Parallelism::Exclusive)
        .sync_handler(move |args, ctx| clarify(&svc, args, ctx))
        .build()
}

/// A choice as display text: strings trimmed, `{label|description|text|title}` objects
/// unwrapped, lists joined; anything else dropped.
fn flatten_choice(choice: &Value) -> String {
    match choice {
        Value::String(s) => s.trim().to_string(),
        Value::Object(map) => ["label", "description", "text", "title"]
            .iter()
            .find_map(|k| map.get(*k).and_then(Value::as_str).map(str::trim))
            .filter(|s| !s.is_empty())
            .unwrap_or_default()
            .to_string(),
        Value::Array(items) => items
            .iter()
            .map(flatten_choice)
            .collect::<Vec<_>>()
            .join(" ")
            .trim()
            .to_string(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => String::new(),
    }
}

/// The `clarify` tool's arguments (Hermes' names; see the schema above).
#[derive(Debug, Deserialize)]
pub struct ClarifyArgs {
    /// The question (blank: "Question text is required.").
    #[serde(default, deserialize_with = "lenient::string")]
    question: Option<String>,
    /// Up to four choices, each flattened to text (Hermes accepts dict-shaped ones);
    /// `null` or absent: open-ended.
    #[serde(default)]
    choices: Option<Given<Vec<Value>>>,
}

fn clarify(services: &CoreServices, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
    let args: ClarifyArgs = args::parse(args)?;
    let Some(question) = args
        .question
        .as_deref()
        .map(str::trim)
        .filter(|q| !q.is_empty())
    else {
        return Ok(tool_error("Question text is required."));
    };
    let choices: Vec<String> = match &args.choices {
        None => Vec::new(),
        Some(Given::Ok(items)) => items
            .iter()
            .map(flatten_choice)
            .filter(|c| !c.is_empty())
            .take(MAX_CHOICES)
            .collect(),
        Some(Given::Other(_)) => return Ok(tool_error("choices must be a list of strings.")),
    };
    let timeout = services.settings.clarify.timeout;
    let request = PromptRequest {
        question: question.to_string(),
        choices: choices.clone(),
        timeout: (timeout > 0).then(|| Duration::from_secs(timeout)),
    };
    let offered = if choices.is_empty() {
        Value::Null
    } else {
        json!(choices)
    };
    match services.prompter.ask(&request, &ctx.cancel) {
        Ok(PromptAnswer::Answered(answer)) => Ok(json!({
            "question": question,
            "choices_offered": offered,
            "user_response": answer.trim(),
        })),
        Ok(PromptAnswer::TimedOut) => Ok(json!({
            "question": question,
            "choices_offered": offered,
            "user_response": TIMED_OUT_RESPONSE,
            "timed_out": true,
        })),
        Err(PromptError::Cancelled) => Err(ToolError::Cancelled),
        Err(PromptError::Unavailable(reason)) => Ok(tool_error(format!(
            "clarify is unavailable: {reason}. Nobody can answer right now — make a \
             reasonable choice yourself and proceed, or put the question in your reply."
        ))),
        Err(err) => Ok(tool_error(format!("Failed to get user input: {err}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::home::Home;
    use crate::prompter::ScriptedPrompter;
    use crate::registry::Registry;

    fn registry_with(prompter: Arc<ScriptedPrompter>) -> Registry {
        let mut services = CoreServices::for_tests(Home::at("/nonexistent"));
        services.prompter = prompter;
        let registry = Registry::new();
        registry.register(build(&Arc::new(services)).unwrap());
        registry
    }

    fn call(registry: &Registry, args: Value) -> Value {
        let r = registry.dispatch_blocking("clarify", args, &ToolContext::default());
        serde_json::from_str(&r.text).unwrap()
    }

    #[test]
    fn returns_the_users_answer() {
        let prompter = Arc::new(ScriptedPrompter::new(["prod"]));
        let registry = registry_with(Arc::clone(&prompter));
        let r = call(
            &registry,
            json!({"question": " Which target? ", "choices": ["staging", {"label": "prod"}, "", "a", "b", "c"]}),
        );
        assert_eq!(
            r,
            json!({"question": "Which target?", "choices_offered": ["staging", "prod", "a", "b"], "user_response": "prod"})
        );
        let asked = prompter.asked();
        assert_eq!(asked[0].choices.len(), MAX_CHOICES);
        assert_eq!(asked[0].timeout, Some(Duration::from_secs(120)));
    }

    #[test]
    fn timeout_tells_the_model_to_decide() {
        let prompter = Arc::new(ScriptedPrompter::default());
        prompter.push(Ok(PromptAnswer::TimedOut));
        let r = call(&registry_with(prompter), json!({"question": "Name?"}));
        assert_eq!(r["timed_out"], true);
        assert_eq!(r["choices_offered"], Value::Null);
        assert!(
            r["user_response"]
                .as_str()
                .unwrap()
                .contains("best judgement")
        );
    }

    #[test]
    fn without_a_terminal_it_is_a_clear_error() {
        // The default prompter reads stdin; under `cargo test` stdin is not a terminal
        // in CI, so use a terminal prompter on a plain file to make it deterministic.
        let file = tempfile::tempfile().unwrap();
        let mut services = CoreServices::for_tests(Home::at("/nonexistent"));
        services.prompter = Arc::new(crate::prompter::TerminalPrompter::with_io(
            file,
            Box::new(std::io::sink()),
        ));
        let registry = Registry::new();
        registry.register(build(&Arc::new(services)).unwrap());
        let r = call(&registry, json!({"question": "Proceed?"}));
        let error = r["error"].as_str().unwrap();
        assert!(error.starts_with("clarify is unavailable"), "{error}");
        assert!(error.contains("not a TTY"), "{error}");
    }

    #[test]
    fn empty_question_is_an_error_and_tool_is_exclusive() {
        let registry = registry_with(Arc::new(ScriptedPrompter::default()));
        assert_eq!(
            call(&registry, json!({"question": "  "}))["error"],
            "Question text is required."
        );
        assert_eq!(
            registry.get("clarify").unwrap().parallelism,
            Parallelism::Exclusive
        );
    }
}
