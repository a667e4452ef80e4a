//! [`Toolsets`]: the catalog of every toolset name (built-in, custom, dynamic, legacy,
//! special), how names resolve to tools, the enabled/disabled selection, and the
//! listing behind `toolhost toolsets`.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;

use tools_core::{AvailabilityPass, Registry, ToolSource};

use super::ToolsetKind;
use super::builtin::{ALL_DESCRIPTION, BUILTIN_TOOLSETS, BuiltinToolset, builtin, is_core_tool};
use super::builtin::{LEGACY_TOOLSETS, legacy};
use super::config::{CustomToolset, ToolsetsSettings};
use super::info::{NOT_REGISTERED, ToolsetInfo, UnavailableTool};
use super::view::RegistryView;
use crate::definitions::memo::DefinitionsMemo;
use crate::definitions::{ToolDefinitions, compute_definitions};

/// A custom toolset the config cannot define.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolsetsError {
    /// The name is reserved or has characters a `--toolsets A,B` list cannot carry.
    #[error("custom toolset {name:?}: {reason}")]
    InvalidName {
        /// The rejected name.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
}

/// Something odd in the toolset definitions; resolution copes, the user should know.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolsetWarning {
    /// A custom toolset includes a name that denotes nothing (yet).
    #[error("custom toolset {toolset:?} includes unknown toolset {include:?}")]
    UnknownInclude {
        /// The custom toolset.
        toolset: String,
        /// The unknown name.
        include: String,
    },
    /// Custom toolsets include each other in a cycle (resolution stops at the repeat).
    #[error("custom toolsets include each other in a cycle: {}", .cycle.join(" -> "))]
    Cycle {
        /// The names along the cycle, first repeated at the end.
        cycle: Vec<String>,
    },
    /// A custom toolset replaces the built-in of the same name.
    #[error("custom toolset {name:?} replaces the built-in toolset of that name")]
    ReplacesBuiltin {
        /// The name.
        name: String,
    },
}

/// The tools an enabled/disabled selection asks for, before availability checks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// Selected tool names, sorted (may include tools nobody registered).
    pub tools: BTreeSet<String>,
    /// Names in the enabled/disabled lists that denote nothing, in order, deduplicated.
    pub unknown: Vec<String>,
}

/// A name after lookup.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Node<'a> {
    All,
    Builtin(&'static BuiltinToolset),
    Custom(&'a str, &'a CustomToolset),
    Dynamic(&'a str),
    Legacy(&'static str, &'static [&'static str]),
}

impl<'a> Node<'a> {
    fn key(&self) -> &'a str {
        match *self {
            Node::All => "all",
            Node::Builtin(b) => b.name,
            Node::Custom(name, _) | Node::Dynamic(name) | Node::Legacy(name, _) => name,
        }
    }

    fn kind(&self) -> ToolsetKind {
        match self {
            Node::All => ToolsetKind::Special,
            Node::Builtin(b) => b.kind,
            Node::Custom(..) => ToolsetKind::Custom,
            Node::Dynamic(_) => ToolsetKind::Dynamic,
            Node::Legacy(..) => ToolsetKind::Legacy,
        }
    }
}

/// The toolset catalog. Built once from config; share it (`Arc`) — every method takes
/// `&self`, and it memoises quiet-mode definitions.
#[derive(Debug, Default)]
pub struct Toolsets {
    custom: BTreeMap<String, CustomToolset>,
    pub(crate) memo: DefinitionsMemo,
}

impl Clone for Toolsets {
    /// A copy with an empty definitions cache.
    fn clone(&self) -> Self {
        Toolsets {
            custom: self.custom.clone(),
            memo: DefinitionsMemo::default(),
        }
    }
}

/// Names a custom toolset may take: what a comma-separated CLI list can carry.
fn validate_custom_name(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        Err("the name is empty")
    } else if name == "all" || name == "*" {
        Err("the name is reserved for the set of all tools")
    } else if name.len() > 64 {
        Err("the name is longer than 64 characters")
    } else if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
    {
        Err("only ASCII letters, digits, '_', '-' and '.' are allowed")
    } else {
        Ok(())
    }
}

impl Toolsets {
    /// The built-in toolsets only.
    pub fn new() -> Self {
        Self::default()
    }

    /// Built-ins plus the config's custom toolsets. Fails only on unusable names;
    /// see [`Toolsets::diagnose`] for softer problems.
    pub fn from_config(config: &ToolsetsSettings) -> Result<Self, ToolsetsError> {
        for name in config.custom.keys() {
            validate_custom_name(name).map_err(|reason| ToolsetsError::InvalidName {
                name: name.clone(),
                reason,
            })?;
        }
        Ok(Toolsets {
            custom: config.custom.clone(),
            memo: DefinitionsMemo::default(),
        })
    }

    /// The user-defined toolsets.
    pub fn custom(&self) -> &BTreeMap<String, CustomToolset> {
        &self.custom
    }

    /// Forget memoised definitions (call when something a dynamic schema reads, such
    /// as configuration, changed; registry changes are noticed automatically).
    pub fn clear_definitions_cache(&self) {
        self.memo.clear();
    }

    pub(crate) fn lookup<'a>(&'a self, view: &'a RegistryView, name: &str) -> Option<Node<'a>> {
        if name == "all" || name == "*" {
            return Some(Node::All);
        }
        if let Some(node) = self.lookup_defined(view, name) {
            return Some(node);
        }
        if let Some(target) = view.alias_target(name) {
            // One hop only: an alias never leads to another alias or a legacy name.
            return self.lookup_defined(view, target);
        }
        LEGACY_TOOLSETS
            .iter()
            .find(|(legacy, _)| *legacy == name)
            .map(|&(legacy, tools)| Node::Legacy(legacy, tools))
    }

    /// Custom, built-in or registry toolset (no aliases of the registry, no legacy).
    fn lookup_defined<'a>(&'a self, view: &'a RegistryView, name: &str) -> Option<Node<'a>> {
        if let Some((key, custom)) = self.custom.get_key_value(name) {
            return Some(Node::Custom(key, custom));
        }
        if let Some(found) = builtin(name) {
            // `hermes-cli` follows a custom toolset that replaced `cli`.
            if let Some((key, custom)) = self.custom.get_key_value(found.name) {
                return Some(Node::Custom(key, custom));
            }
            return Some(Node::Builtin(found));
        }
        view.toolset_key(name).map(Node::Dynamic)
    }

    /// Add every tool `root` resolves to into `out`.
    pub(crate) fn resolve_node<'a>(
        &'a self,
        view: &'a RegistryView,
        root: Node<'a>,
        out: &mut BTreeSet<&'a str>,
    ) {
        let mut visited: HashSet<&'a str> = HashSet::new();
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            if !visited.insert(node.key()) {
                continue; // a diamond or a cycle: already collected
            }
            match node {
                Node::All => self.all_tools(view, out),
                Node::Builtin(b) => {
                    b.direct_tools().for_each(|t| {
                        out.insert(t);
                    });
                    out.extend(view.tools_in(b.name).iter().map(String::as_str));
                    if b.hermes_alias {
                        let alias = format!("hermes-{}", b.name);
                        out.extend(view.tools_in(&alias).iter().map(String::as_str));
                    }
                    stack.extend(b.includes.iter().filter_map(|inc| self.lookup(view, inc)));
                }
                Node::Custom(name, custom) => {
                    out.extend(custom.tools.iter().map(String::as_str));
                    out.extend(view.tools_in(name).iter().map(String::as_str));
                    stack.extend(
                        custom
                            .includes
                            .iter()
                            .filter_map(|inc| self.lookup(view, inc)),
                    );
                }
                Node::Dynamic(toolset) => {
                    out.extend(view.tools_in(toolset).iter().map(String::as_str));
                }
                Node::Legacy(_, tools) => out.extend(tools.iter().copied()),
            }
        }
    }

    /// `all`: every built-in's and custom toolset's direct tools and every registered
    /// tool (every registered tool belongs to a toolset that resolves to it).
    fn all_tools<'a>(&'a self, view: &'a RegistryView, out: &mut BTreeSet<&'a str>) {
        for b in BUILTIN_TOOLSETS {
            if !self.custom.contains_key(b.name) {
                b.direct_tools().for_each(|t| {
                    out.insert(t);
                });
            }
        }
        for custom in self.custom.values() {
            out.extend(custom.tools.iter().map(String::as_str));
        }
        out.extend(view.entries().iter().map(|e| e.name.as_str()));
    }

    /// The tools `name` resolves to, sorted; `None` when the name denotes nothing.
    pub fn resolve(&self, registry: &Registry, name: &str) -> Option<Vec<String>> {
        let view = RegistryView::capture(registry);
        let node = self.lookup(&view, name)?;
        let mut out = BTreeSet::new();
        self.resolve_node(&view, node, &mut out);
        Some(out.into_iter().map(str::to_string).collect())
    }

    /// The kind of toolset `name` denotes.
    pub fn kind_of(&self, registry: &Registry, name: &str) -> Option<ToolsetKind> {
        let view = RegistryView::capture(registry);
        self.lookup(&view, name).map(|n| n.kind())
    }

    /// True when `name` denotes a toolset of any kind.
    pub fn is_known(&self, registry: &Registry, name: &str) -> bool {
        self.kind_of(registry, name).is_some()
    }

    /// The tools an enabled/disabled selection asks for, before availability checks
    /// (what `toolhost tools --toolsets A --disable B` lists). Silent: unknown names
    /// come back in [`Selection::unknown`] for the caller to report.
    pub fn select(
        &self,
        registry: &Registry,
        enabled: Option<&[String]>,
        disabled: Option<&[String]>,
    ) -> Selection {
        let view = RegistryView::capture(registry);
        let (tools, unknown) = self.select_in(&view, enabled, disabled, true);
        Selection {
            tools: tools.into_iter().map(str::to_string).collect(),
            unknown,
        }
    }

    /// Enabled (`None` = all) minus disabled. Presets in the disabled list remove only
    /// their non-core tools (Hermes' rule: a `hermes-*` bundle in `disabled` must not
    /// strip the core tools every other toolset shares).
    pub(crate) fn select_in<'a>(
        &'a self,
        view: &'a RegistryView,
        enabled: Option<&[String]>,
        disabled: Option<&[String]>,
        quiet: bool,
    ) -> (BTreeSet<&'a str>, Vec<String>) {
        let mut unknown: Vec<String> = Vec::new();
        let mut note_unknown = |name: &str, list: &str| {
            if !quiet {
                tracing::warn!(toolset = %name, list, "unknown toolset ignored");
            }
            if !unknown.iter().any(|u| u == name) {
                unknown.push(name.to_string());
            }
        };
        let mut selected = BTreeSet::new();
        match enabled {
            None => self.resolve_node(view, Node::All, &mut selected),
            Some(names) => {
                for name in names {
                    let Some(node) = self.lookup(view, name) else {
                        note_unknown(name, "enabled");
                        continue;
                    };
                    let mut tools = BTreeSet::new();
                    self.resolve_node(view, node, &mut tools);
                    if !quiet {
                        tracing::info!(toolset = %name, kind = %node.kind(), tools = %join(&tools), "enabled toolset");
                    }
                    selected.extend(tools);
                }
            }
        }
        for name in disabled.unwrap_or_default() {
            let Some(node) = self.lookup(view, name) else {
                // Not a toolset: a registered tool's name disables that one tool.
                if let Some(entry) = view.entry(name) {
                    selected.remove(entry.name.as_str());
                } else {
                    note_unknown(name, "disabled");
                }
                continue;
            };
            let mut tools = BTreeSet::new();
            self.resolve_node(view, node, &mut tools);
            let keeps_core = matches!(node, Node::Builtin(b) if b.keeps_core_when_disabled());
            if keeps_core {
                tools.retain(|t| !is_core_tool(t));
            }
            if !quiet {
                if keeps_core {
                    tracing::info!(toolset = %name, removed = %join(&tools), "disabling a preset removes only its non-core tools; core tools stay");
                } else {
                    tracing::info!(toolset = %name, tools = %join(&tools), "disabled toolset");
                }
            }
            for tool in &tools {
                selected.remove(tool);
            }
        }
        (selected, unknown)
    }

    /// Every toolset, sorted by name (`toolhost toolsets`).
    pub fn list(&self, registry: &Registry) -> Vec<ToolsetInfo> {
        let view = RegistryView::capture(registry);
        let mut pass = AvailabilityPass::new();
        let mut rows: Vec<ToolsetInfo> = self
            .known_nodes(&view)
            .into_iter()
            .map(|node| self.info(&view, node, &mut pass))
            .collect();
        rows.sort_by(|a, b| a.name.cmp(&b.name));
        rows
    }

    /// The row for one name (any alias accepted); `None` when unknown.
    pub fn get(&self, registry: &Registry, name: &str) -> Option<ToolsetInfo> {
        let view = RegistryView::capture(registry);
        let node = self.lookup(&view, name)?;
        Some(self.info(&view, node, &mut AvailabilityPass::new()))
    }

    /// Each toolset once, under its canonical name.
    fn known_nodes<'a>(&'a self, view: &'a RegistryView) -> Vec<Node<'a>> {
        let mut nodes = vec![Node::All];
        nodes.extend(
            BUILTIN_TOOLSETS
                .iter()
                .filter(|b| !self.custom.contains_key(b.name))
                .map(Node::Builtin),
        );
        nodes.extend(self.custom.iter().map(|(k, v)| Node::Custom(k, v)));
        nodes.extend(
            view.toolset_names()
                .filter(|t| matches!(self.lookup(view, t), Some(Node::Dynamic(_))))
                .map(Node::Dynamic),
        );
        nodes.extend(
            LEGACY_TOOLSETS
                .iter()
                .filter(|(name, _)| matches!(self.lookup(view, name), Some(Node::Legacy(..))))
                .map(|&(name, tools)| Node::Legacy(name, tools)),
        );
        nodes
    }

    fn info(
        &self,
        view: &RegistryView,
        node: Node<'_>,
        pass: &mut AvailabilityPass,
    ) -> ToolsetInfo {
        let mut tools = BTreeSet::new();
        self.resolve_node(view, node, &mut tools);
        let unavailable: Vec<UnavailableTool> = tools
            .iter()
            .filter_map(|t| {
                let reason = match view.entry(t) {
                    None => NOT_REGISTERED.to_string(),
                    Some(entry) => {
                        let availability = pass.evaluate(entry.check.as_ref());
                        if availability.available {
                            return None;
                        }
                        availability
                            .reason
                            .unwrap_or_else(|| "its availability check failed".to_string())
                    }
                };
                Some(UnavailableTool {
                    name: t.to_string(),
                    reason,
                })
            })
            .collect();
        let available = unavailable.len() < tools.len();
        let name = node.key().to_string();
        let mut aliases: Vec<String> = match node {
            Node::All => vec!["*".to_string()],
            Node::Builtin(b) if b.hermes_alias => vec![format!("hermes-{}", b.name)],
            _ => Vec::new(),
        };
        // Registry aliases that actually lead here (not shadowed by another name).
        aliases.extend(
            view.aliases_of(&name)
                .filter(|alias| {
                    self.lookup(view, alias)
                        .is_some_and(|n| n.key() == name && *alias != name)
                })
                .map(str::to_string),
        );
        aliases.sort();
        aliases.dedup();
        let description = match node {
            Node::All => ALL_DESCRIPTION.to_string(),
            Node::Builtin(b) => b.description.to_string(),
            Node::Custom(_, c) if !c.description.is_empty() => c.description.clone(),
            Node::Custom(name, _) => format!("Custom toolset: {name}"),
            Node::Dynamic(toolset) => dynamic_description(view, toolset),
            Node::Legacy(name, _) => format!("Legacy name for {}", legacy_target(name)),
        };
        ToolsetInfo {
            name,
            kind: node.kind(),
            description,
            tools: tools.into_iter().map(str::to_string).collect(),
            available,
            unavailable,
            aliases,
        }
    }

    /// Unknown includes, include cycles among custom toolsets, and custom toolsets
    /// that replace built-ins, against the registry as it is now (call after
    /// discovery: an include may name an MCP toolset that appears only then).
    pub fn diagnose(&self, registry: &Registry) -> Vec<ToolsetWarning> {
        let view = RegistryView::capture(registry);
        let mut warnings = Vec::new();
        for (name, custom) in &self.custom {
            if builtin(name).is_some() {
                warnings.push(ToolsetWarning::ReplacesBuiltin { name: name.clone() });
            }
            for include in &custom.includes {
                if self.lookup(&view, include).is_none() {
                    warnings.push(ToolsetWarning::UnknownInclude {
                        toolset: name.clone(),
                        include: include.clone(),
                    });
                }
            }
        }
        warnings.extend(self.custom_cycles(&view));
        warnings
    }

    /// The custom toolsets `name` (a custom toolset) includes.
    fn custom_includes<'a>(&'a self, view: &'a RegistryView, name: &str) -> Vec<&'a str> {
        let Some(custom) = self.custom.get(name) else {
            return Vec::new();
        };
        custom
            .includes
            .iter()
            .filter_map(|inc| match self.lookup(view, inc) {
                Some(Node::Custom(key, _)) => Some(key),
                _ => None,
            })
            .collect()
    }

    /// Cycles in the include graph of custom toolsets (depth-first, iterative).
    fn custom_cycles(&self, view: &RegistryView) -> Vec<ToolsetWarning> {
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            Active,
            Done,
        }
        let mut marks: BTreeMap<&str, Mark> = BTreeMap::new();
        let mut cycles = Vec::new();
        for start in self.custom.keys() {
            if marks.contains_key(start.as_str()) {
                continue;
            }
            // Depth-first stack of (toolset, its custom includes, next include to visit).
            let mut stack: Vec<(&str, Vec<&str>, usize)> =
                vec![(start.as_str(), self.custom_includes(view, start), 0)];
            marks.insert(start, Mark::Active);
            while let Some(top) = stack.last_mut() {
                let Some(child) = top.1.get(top.2).copied() else {
                    if let Some((done, ..)) = stack.pop() {
                        marks.insert(done, Mark::Done);
                    }
                    continue;
                };
                top.2 += 1;
                match marks.get(child) {
                    Some(Mark::Active) => {
                        let from = stack.iter().position(|(n, ..)| *n == child).unwrap_or(0);
                        let mut cycle: Vec<String> =
                            stack[from..].iter().map(|(n, ..)| n.to_string()).collect();
                        cycle.push(child.to_string());
                        cycles.push(ToolsetWarning::Cycle { cycle });
                    }
                    Some(Mark::Done) => {}
                    None => {
                        marks.insert(child, Mark::Active);
                        stack.push((child, self.custom_includes(view, child), 0));
                    }
                }
            }
        }
        cycles
    }

    /// Tool definitions for the model; see [`crate::definitions::get_tool_definitions`].
    pub fn definitions(
        &self,
        registry: &Registry,
        enabled: Option<&[String]>,
        disabled: Option<&[String]>,
        quiet: bool,
    ) -> Arc<ToolDefinitions> {
        if !quiet {
            return Arc::new(compute_definitions(
                self,
                &RegistryView::capture(registry),
                enabled,
                disabled,
                false,
            ));
        }
        if let Some(hit) = self.memo.get(registry, enabled, disabled) {
            return hit;
        }
        let view = RegistryView::capture(registry);
        let fresh = Arc::new(compute_definitions(self, &view, enabled, disabled, true));
        self.memo
            .insert(&view, enabled, disabled, Arc::clone(&fresh));
        fresh
    }
}

fn join(tools: &BTreeSet<&str>) -> String {
    if tools.is_empty() {
        "no tools".to_string()
    } else {
        tools.iter().copied().collect::<Vec<_>>().join(", ")
    }
}

fn legacy_target(name: &str) -> String {
    legacy(name)
        .map(|tools| tools.join(", "))
        .unwrap_or_default()
}

fn dynamic_description(view: &RegistryView, toolset: &str) -> String {
    match view.source_of(toolset) {
        Some(ToolSource::Mcp(server)) => format!("MCP server '{server}' tools"),
        Some(ToolSource::Plugin(plugin)) => {
            format!("Plugin toolset: {toolset} (plugin '{plugin}')")
        }
        _ => format!("Toolset '{toolset}'"),
    }
}
