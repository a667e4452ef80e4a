//! browser: the `browser_*` tools (toolset `browser`) — a headless Chromium per agent
//! task, driven over the Chrome DevTools Protocol.
//!
//! A bundled plugin rather than core code: it needs a browser and threads of its own,
//! and nothing else in the host depends on it, so it lives behind the plugin ABI (which
//! it also exercises with real, stateful tools). Names, parameters and result shapes
//! follow Hermes; docs/hermes/browser.md lists where we differ.

#[doc(hidden)]
pub mod bench_api;
mod cdp;
mod cdp_policy;
mod downloads;
mod error;
mod guard;
mod inspection;
mod interaction;
mod launch;
mod navigation;
mod registry;
mod session;
mod settings;
mod snapshot;
mod tls;
mod tools;
mod uploads;
mod vision;
mod walker;

#[cfg(test)]
mod cdp_policy_tests;
#[cfg(test)]
mod guard_tests;
#[cfg(test)]
mod snapshot_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tls_tests;
#[cfg(test)]
mod vision_tests;

toolhost_plugin_api::export_plugin!(tools::plugin);
