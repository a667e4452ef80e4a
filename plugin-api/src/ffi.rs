//! The SDK's side of the ABI: the root module's functions and the [`PluginObject`]
//! implementation behind every plugin. Everything that runs plugin code runs it under
//! `catch_unwind` here, in the plugin's own copy of std, so no panic ever reaches the
//! boundary.

use std::any::Any;
use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;
use std::sync::atomic::AtomicBool;

use abi_stable::prefix_type::PrefixTypeTrait;
use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RResult, RStr, RString};

use crate::abi::{
    FfiError, HostLogger, PANIC_KIND, PluginInstance, PluginModule, PluginModuleRef, PluginObject,
    PluginObject_TO,
};
use crate::context::ToolContext;
use crate::hooks::{HookError, HookSet};
use crate::plugin::{Host, Plugin};
use crate::tool::Tool;
use crate::wire::Declaration;

/// The plugin's build function, normalised by [`export_plugin!`](crate::export_plugin).
pub type BuildFn = fn(&Host) -> Result<Plugin, String>;

static BUILD: OnceLock<BuildFn> = OnceLock::new();

/// The text of a panic payload.
pub fn panic_text(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

/// Run `f`, turning a panic into an `FfiError` of kind `panic`.
fn guard<T>(f: impl FnOnce() -> Result<T, FfiError>) -> RResult<T, FfiError> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result.into(),
        Err(payload) => RResult::RErr(FfiError::new(PANIC_KIND, &panic_text(&*payload))),
    }
}

/// The root module (called by the code [`export_plugin!`](crate::export_plugin)
/// generates, once per loaded library).
pub fn root_module(build: BuildFn) -> PluginModuleRef {
    let _ = BUILD.set(build);
    PluginModule {
        init: init_ffi,
        register: register_ffi,
    }
    .leak_into_prefix()
}

extern "C" fn init_ffi(logger: HostLogger) {
    // Installing a subscriber or hook cannot panic in practice; if it ever did, the
    // plugin would simply log nothing.
    let _ = catch_unwind(|| crate::log_bridge::install(logger));
}

extern "C" fn register_ffi(host: RStr<'_>) -> RResult<PluginInstance, FfiError> {
    guard(|| {
        let host: Host = serde_json::from_str(host.as_str())
            .map_err(|e| FfiError::new("invalid_json", &format!("host info: {e}")))?;
        let build = BUILD
            .get()
            .ok_or_else(|| FfiError::new("failed", "the plugin has no build function"))?;
        let plugin = build(&host).map_err(|e| FfiError::new("failed", &e))?;
        let state = PluginState::new(plugin, &host.plugin)?;
        Ok(PluginInstance {
            declaration: state.declaration.clone().into(),
            object: PluginObject_TO::from_value(state, TD_Opaque),
        })
    })
}

struct PluginState {
    tools: Vec<Tool>,
    hooks: HookSet,
    declaration: String,
}

impl PluginState {
    fn new(plugin: Plugin, name: &str) -> Result<Self, FfiError> {
        let mut seen = HashSet::new();
        for tool in &plugin.tools {
            if !seen.insert(tool.name.as_str()) {
                return Err(FfiError::new(
                    "failed",
                    &format!("tool {} is declared twice", tool.name),
                ));
            }
        }
        let declaration = serde_json::to_string(&Declaration::new(
            crate::API_VERSION,
            plugin.tools.iter().map(|t| t.declaration(name)).collect(),
            plugin.hooks.kinds(),
        ))
        .map_err(|e| FfiError::new("failed", &format!("declaration: {e}")))?;
        Ok(PluginState {
            tools: plugin.tools,
            hooks: plugin.hooks,
            declaration,
        })
    }

    fn tool(&self, index: u32) -> Result<&Tool, FfiError> {
        self.tools
            .get(index as usize)
            .ok_or_else(|| FfiError::new("unknown_tool", &format!("no tool number {index}")))
    }
}

impl PluginObject for PluginState {
    fn call_tool(
        &self,
        index: u32,
        args: RStr<'_>,
        context: RStr<'_>,
        cancel: &AtomicBool,
    ) -> RResult<RString, FfiError> {
        guard(|| {
            let tool = self.tool(index)?;
            let args = serde_json::from_str(args.as_str())
                .map_err(|e| FfiError::new("invalid_arguments", &e.to_string()))?;
            let ctx = ToolContext::new(context.as_str(), cancel);
            match (tool.handler)(args, &ctx) {
                Ok(value) => serde_json::to_string(&value)
                    .map(RString::from)
                    .map_err(|e| FfiError::new("failed", &format!("result: {e}"))),
                Err(err) => Err(FfiError::new(&err.kind, &err.message)),
            }
        })
    }

    fn check_tool(&self, index: u32) -> RResult<(), FfiError> {
        guard(|| match &self.tool(index)?.check {
            None => Ok(()),
            Some(check) => check().map_err(|reason| FfiError::new("unavailable", &reason)),
        })
    }

    fn run_hook(&self, kind: RStr<'_>, event: RStr<'_>) -> RResult<RString, FfiError> {
        guard(|| {
            self.hooks
                .run(kind.as_str(), event.as_str())
                .map(RString::from)
                .map_err(|e| match e {
                    HookError::UnknownKind => {
                        FfiError::new("unknown_hook", &format!("no hook kind {kind}"))
                    }
                    HookError::BadEvent(e) => {
                        FfiError::new("invalid_json", &format!("{kind} event: {e}"))
                    }
                })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;

    fn state() -> PluginState {
        let plugin = Plugin::new()
            .tool(Tool::new("echo", "", |args, _| Ok(json!({ "echo": args }))))
            .tool(Tool::new("boom", "x", |_, _| panic!("kaboom")))
            .tool(Tool::new("fails", "x", |_, _| {
                Err(ToolError::invalid_arguments("n < 0"))
            }))
            .tool(Tool::new("down", "x", |_, _| Ok(json!(1))).check(|| panic!("probe broke")))
            .post_tool_call(|_| panic!("observer broke"));
        PluginState::new(plugin, "demo").ok().unwrap()
    }

    fn call(state: &PluginState, index: u32, args: &str) -> Result<String, FfiError> {
        let cancel = AtomicBool::new(false);
        state
            .call_tool(index, args.into(), "{}".into(), &cancel)
            .into_result()
            .map(|s| s.into_string())
    }

    #[test]
    fn declaration_defaults_toolset_to_plugin_name() {
        let state = state();
        let decl: serde_json::Value = serde_json::from_str(&state.declaration).unwrap();
        assert_eq!(decl["tools"][0]["toolset"], "demo");
        assert_eq!(decl["tools"][3]["has_check"], true);
        assert_eq!(decl["hooks"], json!(["post_tool_call"]));
    }

    #[test]
    fn calls_errors_and_panics_become_values() {
        let state = state();
        assert_eq!(
            call(&state, 0, r#"{"a":1}"#).unwrap(),
            r#"{"echo":{"a":1}}"#
        );
        let panic = call(&state, 1, "{}").unwrap_err();
        assert_eq!(
            (panic.kind.as_str(), panic.message.as_str()),
            ("panic", "kaboom")
        );
        let fails = call(&state, 2, "{}").unwrap_err();
        assert_eq!(fails.kind.as_str(), "invalid_arguments");
        assert_eq!(
            call(&state, 9, "{}").unwrap_err().kind.as_str(),
            "unknown_tool"
        );
        assert_eq!(
            call(&state, 0, "{nope").unwrap_err().kind.as_str(),
            "invalid_arguments"
        );
    }

    #[test]
    fn check_and_hook_panics_are_caught() {
        let state = state();
        assert!(state.check_tool(0).is_ok());
        assert!(state.check_tool(3).unwrap_err().is_panic());
        let hook = state.run_hook("post_tool_call".into(), r#"{"tool":"t"}"#.into());
        assert!(hook.unwrap_err().is_panic());
        let unknown = state.run_hook("nope".into(), "{}".into());
        assert_eq!(unknown.unwrap_err().kind.as_str(), "unknown_hook");
    }

    #[test]
    fn duplicate_tool_names_are_refused() {
        let plugin = Plugin::new()
            .tool(Tool::new("a", "", |_, _| Ok(json!(1))))
            .tool(Tool::new("a", "", |_, _| Ok(json!(2))));
        assert!(PluginState::new(plugin, "p").is_err());
    }
}
