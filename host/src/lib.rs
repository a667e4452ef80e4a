//! The toolhost host: discovery, toolsets, tool definitions, the dispatch pipeline and
//! the CLI.

pub mod definitions;
pub mod schema_sanitize;
pub mod toolsets;
