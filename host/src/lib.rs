//! The toolhost host: discovery, toolsets, tool definitions, the dispatch pipeline and
//! the CLI.
