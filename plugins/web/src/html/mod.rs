//! A fast HTML parser for the pages `web_extract` converts: it builds the same
//! `dom_query` tree html5ever would — through the same `TreeSink` calls, in the same
//! order — for markup it can prove it reads the same way, and gives up
//! ([`Unsupported`]) on anything else, so the caller parses that page with html5ever.
//!
//! Why: html5ever's tokenizer and tree builder cost ~26 ms on a 1 MB page, more than the
//! whole conversion may take (issue #13, goal ≤ 20 ms). Well-formed pages need little of
//! their machinery: this parser finds text with `memchr`, and its tree builder follows
//! the WHATWG rules for the document, head, body and table insertion modes, implied end
//! tags, and the active formatting elements (reconstruction included). It refuses the
//! rest: quirks-mode documents (no `<!DOCTYPE html>`), foreign content (`<svg>`,
//! `<math>`), the adoption agency's misnested cases, foster parenting, `<select>`,
//! `<template>`, `<textarea>`, frames, character references without `;`, and the like
//! (`tokens.rs`, `tree.rs`). Tests check the trees against html5ever's node for node
//! (`agreement_tests.rs`), on a corpus and on generated markup.

mod body;
mod outer_modes;
mod table;
mod tokens;
mod tree;

#[cfg(test)]
mod agreement_tests;
/// Real-shaped pages for other modules' tests.
#[cfg(test)]
pub(crate) use agreement_tests::CORPUS as CORPUS_FOR_TESTS;

use std::borrow::Cow;

use dom_query::Document;

/// Why the fast parser left a page to html5ever (the construct it does not handle).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unsupported(pub &'static str);

/// `html` parsed into the tree html5ever would build, or why not.
pub fn parse(html: &str) -> Result<Document, Unsupported> {
    if memchr::memchr(0, html.as_bytes()).is_some() {
        return Err(Unsupported("NUL character"));
    }
    // The input stream's preprocessing: a BOM is dropped, CR LF and CR become LF.
    let html = html.strip_prefix('\u{FEFF}').unwrap_or(html);
    let html: Cow<'_, str> = if memchr::memchr(b'\r', html.as_bytes()).is_some() {
        Cow::Owned(html.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        Cow::Borrowed(html)
    };
    tree::build(&html)
}
