//! Reloading a process plugin without restarting the host: its child is replaced by a
//! new one started from the files now on disk (a rebuilt library, edited Python code),
//! and what the new child declares replaces the plugin's tools and hooks. In-process
//! plugins cannot be reloaded (a library is never unloaded).
//!
//! The plugin is out of service between the two: its tools are withdrawn first, so a
//! call arriving meanwhile gets "unknown tool" rather than the old code. A reload that
//! fails leaves the plugin withdrawn and says why; reloading again after a fix brings it
//! back. A reload also puts a plugin disabled after crashes or panics back in service.

use std::sync::Arc;

use tools_core::{Hooks, Registry};

use super::process::plugin::parse_declaration;
use super::python::shim;
use super::runtime::Rejoined;
use super::{PluginKind, PluginRecord, PluginSet, adapter};

/// Why a plugin could not be reloaded.
#[derive(Debug, thiserror::Error)]
pub enum ReloadError {
    /// No loaded plugin has that name.
    #[error("no loaded plugin named {0}")]
    NotLoaded(String),
    /// The plugin runs in the host process.
    #[error(
        "plugin {0} runs in-process and cannot be reloaded (set [plugins.isolation] {0} = \"process\")"
    )]
    InProcess(String),
    /// The new child failed to start or register.
    #[error("plugin {name} could not be reloaded: {reason}")]
    Failed {
        /// The plugin.
        name: String,
        /// Why.
        reason: String,
    },
}

impl PluginSet {
    /// Replace process plugin `name`'s child and join what it now declares (see the
    /// module docs); its record afterwards.
    pub fn reload(
        &self,
        name: &str,
        registry: &Arc<Registry>,
        hooks: &Arc<Hooks>,
    ) -> Result<PluginRecord, ReloadError> {
        let record = self
            .records
            .iter()
            .find(|r| r.name == name && r.runtime.is_some())
            .ok_or_else(|| ReloadError::NotLoaded(name.to_string()))?;
        let Some(runtime) = record.runtime.as_ref() else {
            return Err(ReloadError::NotLoaded(name.to_string()));
        };
        let Some(process) = runtime.process() else {
            return Err(ReloadError::InProcess(name.to_string()));
        };
        let failed = |reason: String| ReloadError::Failed {
            name: name.to_string(),
            reason,
        };
        runtime.withdraw();
        let hello = process.reload(None).map_err(|e| failed(e.to_string()))?;
        let declaration = parse_declaration(&hello).map_err(|e| failed(e.to_string()))?;
        // The core tools it may replace stay those allowed at start.
        let manifest = runtime
            .manifest()
            .ok_or_else(|| failed("its manifest is unknown".into()))?;
        let unsupported = match record.kind {
            PluginKind::Python => shim::extras(&hello).unsupported,
            PluginKind::Native => Vec::new(),
        };
        runtime.reinstate();
        let joined = adapter::join(runtime, &declaration, &manifest, registry, hooks);
        runtime.set_rejoined(Rejoined {
            tools: joined.tools,
            hooks: joined.hooks,
            refused: joined.refused,
            unsupported,
        });
        tracing::info!(plugin = %name, "plugin reloaded");
        Ok(record.current())
    }
}
