//! The host end of the logging bridge: plugin events re-emitted through the host's
//! `tracing` subscriber with target `plugin`, the plugin's name as field `plugin` and
//! its own target as `plugin_target` (`RUST_LOG=plugin=debug` shows them all).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{PoisonError, RwLock};

use abi_stable::std_types::RStr;
use toolhost_plugin_api::abi::{HostLogger, level};
use tracing::level_filters::LevelFilter;

/// Plugin names by logger id (ids are indexes; libraries are never unloaded).
static NAMES: RwLock<Vec<String>> = RwLock::new(Vec::new());

fn max_level() -> u8 {
    match LevelFilter::current() {
        LevelFilter::OFF => 0,
        LevelFilter::ERROR => level::ERROR,
        LevelFilter::WARN => level::WARN,
        LevelFilter::INFO => level::INFO,
        LevelFilter::DEBUG => level::DEBUG,
        _ => level::TRACE,
    }
}

/// A logger for plugin `name`.
pub fn logger_for(name: &str) -> HostLogger {
    let mut names = NAMES.write().unwrap_or_else(PoisonError::into_inner);
    names.push(name.to_string());
    HostLogger {
        plugin_id: (names.len() - 1) as u64,
        max_level: max_level(),
        log: host_log,
    }
}

extern "C" fn host_log(plugin_id: u64, lvl: u8, target: RStr<'_>, message: RStr<'_>) {
    // Nothing may unwind into the plugin.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let names = NAMES.read().unwrap_or_else(PoisonError::into_inner);
        let plugin = usize::try_from(plugin_id)
            .ok()
            .and_then(|i| names.get(i))
            .map_or("?", String::as_str);
        let (target, message) = (target.as_str(), message.as_str());
        match lvl {
            level::ERROR => {
                tracing::error!(target: "plugin", plugin, plugin_target = target, "{message}")
            }
            level::WARN => {
                tracing::warn!(target: "plugin", plugin, plugin_target = target, "{message}")
            }
            level::INFO => {
                tracing::info!(target: "plugin", plugin, plugin_target = target, "{message}")
            }
            level::DEBUG => {
                tracing::debug!(target: "plugin", plugin, plugin_target = target, "{message}")
            }
            _ => tracing::trace!(target: "plugin", plugin, plugin_target = target, "{message}"),
        }
    }));
}
