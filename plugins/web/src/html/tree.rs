//! The fast parser's tree builder: the insertion-mode dispatch, the stack of open
//! elements with its scopes, the list of active formatting elements, and the `TreeSink`
//! calls that build the `dom_query` document in html5ever's order. The rules of the
//! modes live beside it: around the body in `outer_modes.rs`, the body in `body.rs`,
//! tables in `table.rs`.

use dom_query::{Document, NodeId};
use html5ever::tendril::StrTendril;
use html5ever::tree_builder::{ElementFlags, NodeOrText, TreeSink};
use html5ever::{Attribute, LocalName, QualName, local_name, ns};

use super::Unsupported;
use super::tokens::{Tag, Token, Tokenizer, is_space};

/// Where the builder is in the document (the WHATWG insertion modes it supports).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mode {
    Initial,
    BeforeHtml,
    BeforeHead,
    InHead,
    AfterHead,
    InBody,
    InTable,
    InTableBody,
    InRow,
    InCell,
    AfterBody,
    AfterAfterBody,
}

/// What a rule did with its token.
pub(super) enum Step<'a> {
    Done,
    /// Done, and a newline right after the tag is dropped (`<pre>`, `<listing>`).
    DoneSkipNewline,
    /// The mode changed and the token is processed again.
    Again(Token<'a>),
}

/// An entry of the list of active formatting elements.
pub(super) enum Format {
    Marker,
    Element(NodeId, Tag),
}

/// Which elements bound a scope (html5ever's `tag_sets.rs`).
#[derive(Clone, Copy)]
pub(super) enum Scope {
    Default,
    Button,
    ListItem,
    Table,
}

/// The tree under construction and the parser's state.
pub(super) struct Builder {
    pub(super) doc: Document,
    pub(super) mode: Mode,
    pub(super) quirks: bool,
    pub(super) open: Vec<(NodeId, LocalName)>,
    pub(super) formatting: Vec<Format>,
    pub(super) form: Option<NodeId>,
}

/// Build the document of `html` (preprocessed: no CR, no NUL).
pub(super) fn build(html: &str) -> Result<Document, Unsupported> {
    let mut builder = Builder {
        doc: Document::default(),
        mode: Mode::Initial,
        quirks: false,
        open: Vec::with_capacity(64),
        formatting: Vec::new(),
        form: None,
    };
    let mut tokens = Tokenizer::new(html);
    while let Some(token) = tokens.next_token()? {
        if builder.process(token)? {
            tokens.skip_newline()?;
        }
    }
    if matches!(
        builder.mode,
        Mode::Initial | Mode::BeforeHtml | Mode::BeforeHead | Mode::InHead | Mode::AfterHead
    ) {
        return Err(Unsupported("document without a body"));
    }
    Ok(builder.doc)
}

/// The text's leading whitespace and the rest.
pub(super) fn split_space(text: &str) -> (&str, &str) {
    let n = text.bytes().take_while(|&b| is_space(b)).count();
    text.split_at(n)
}

/// Elements html5ever's tree builder calls "special".
pub(super) fn is_special(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("address")
            | local_name!("applet")
            | local_name!("area")
            | local_name!("article")
            | local_name!("aside")
            | local_name!("base")
            | local_name!("basefont")
            | local_name!("bgsound")
            | local_name!("blockquote")
            | local_name!("body")
            | local_name!("br")
            | local_name!("button")
            | local_name!("caption")
            | local_name!("center")
            | local_name!("col")
            | local_name!("colgroup")
            | local_name!("dd")
            | local_name!("details")
            | local_name!("dir")
            | local_name!("div")
            | local_name!("dl")
            | local_name!("dt")
            | local_name!("embed")
            | local_name!("fieldset")
            | local_name!("figcaption")
            | local_name!("figure")
            | local_name!("footer")
            | local_name!("form")
            | local_name!("frame")
            | local_name!("frameset")
            | local_name!("h1")
            | local_name!("h2")
            | local_name!("h3")
            | local_name!("h4")
            | local_name!("h5")
            | local_name!("h6")
            | local_name!("head")
            | local_name!("header")
            | local_name!("hgroup")
            | local_name!("hr")
            | local_name!("html")
            | local_name!("iframe")
            | local_name!("img")
            | local_name!("input")
            | local_name!("isindex")
            | local_name!("li")
            | local_name!("link")
            | local_name!("listing")
            | local_name!("main")
            | local_name!("marquee")
            | local_name!("menu")
            | local_name!("meta")
            | local_name!("nav")
            | local_name!("noembed")
            | local_name!("noframes")
            | local_name!("noscript")
            | local_name!("object")
            | local_name!("ol")
            | local_name!("p")
            | local_name!("param")
            | local_name!("plaintext")
            | local_name!("pre")
            | local_name!("script")
            | local_name!("section")
            | local_name!("select")
            | local_name!("source")
            | local_name!("style")
            | local_name!("summary")
            | local_name!("table")
            | local_name!("tbody")
            | local_name!("td")
            | local_name!("template")
            | local_name!("textarea")
            | local_name!("tfoot")
            | local_name!("th")
            | local_name!("thead")
            | local_name!("title")
            | local_name!("tr")
            | local_name!("track")
            | local_name!("ul")
            | local_name!("wbr")
            | local_name!("xmp")
    )
}

/// h1–h6.
pub(super) fn is_heading(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("h1")
            | local_name!("h2")
            | local_name!("h3")
            | local_name!("h4")
            | local_name!("h5")
            | local_name!("h6")
    )
}

pub(super) fn bounds(scope: Scope, name: &LocalName) -> bool {
    let default = || {
        matches!(
            *name,
            local_name!("applet")
                | local_name!("caption")
                | local_name!("html")
                | local_name!("table")
                | local_name!("td")
                | local_name!("th")
                | local_name!("marquee")
                | local_name!("object")
                | local_name!("select")
                | local_name!("template")
        )
    };
    match scope {
        Scope::Default => default(),
        Scope::Button => default() || *name == local_name!("button"),
        Scope::ListItem => default() || matches!(*name, local_name!("ol") | local_name!("ul")),
        Scope::Table => matches!(
            *name,
            local_name!("html") | local_name!("table") | local_name!("template")
        ),
    }
}

impl Builder {
    /// Process one token in the current mode (and again after mode changes); whether a
    /// newline right after it is to be dropped.
    fn process<'a>(&mut self, token: Token<'a>) -> Result<bool, Unsupported> {
        let mut token = token;
        loop {
            let step = match self.mode {
                Mode::Initial => self.initial(token)?,
                Mode::BeforeHtml => self.before_html(token)?,
                Mode::BeforeHead => self.before_head(token)?,
                Mode::InHead => self.in_head(token)?,
                Mode::AfterHead => self.after_head(token)?,
                Mode::InBody => self.in_body(token)?,
                Mode::InTable => self.in_table(token)?,
                Mode::InTableBody => self.in_table_body(token)?,
                Mode::InRow => self.in_row(token)?,
                Mode::InCell => self.in_cell(token)?,
                Mode::AfterBody => self.after_body(token)?,
                Mode::AfterAfterBody => self.after_after_body(token)?,
            };
            match step {
                Step::Done => return Ok(false),
                Step::DoneSkipNewline => return Ok(true),
                Step::Again(t) => token = t,
            }
        }
    }

    // ---- the tree ----

    pub(super) fn current(&self) -> NodeId {
        // The stack is never empty past "before html", where every caller is.
        self.open
            .last()
            .map_or_else(|| self.doc.get_document(), |(id, _)| *id)
    }

    pub(super) fn create(&self, name: LocalName, attrs: Vec<Attribute>) -> NodeId {
        self.doc.create_element(
            QualName::new(None, ns!(html), name),
            attrs,
            ElementFlags::default(),
        )
    }

    /// Insert an element at the current node and push it.
    pub(super) fn insert(&mut self, tag: Tag) -> NodeId {
        let parent = self.current();
        let id = self.create(tag.name.clone(), tag.attrs);
        self.doc.append(&parent, NodeOrText::AppendNode(id));
        self.open.push((id, tag.name));
        id
    }

    /// Insert an element without attributes (one the parser implies) and push it.
    pub(super) fn insert_implied(&mut self, name: LocalName) -> NodeId {
        self.insert(Tag {
            name,
            attrs: Vec::new(),
        })
    }

    /// Insert an element that is closed at once (void elements).
    pub(super) fn insert_void(&mut self, tag: Tag) {
        let parent = self.current();
        let id = self.create(tag.name, tag.attrs);
        self.doc.append(&parent, NodeOrText::AppendNode(id));
    }

    /// Insert a raw-text element with its text (script, style, title, …).
    pub(super) fn insert_raw(&mut self, tag: Tag, text: &str) {
        let parent = self.current();
        let id = self.create(tag.name, tag.attrs);
        self.doc.append(&parent, NodeOrText::AppendNode(id));
        if !text.is_empty() {
            self.doc
                .append(&id, NodeOrText::AppendText(StrTendril::from_slice(text)));
        }
    }

    pub(super) fn append_text(&mut self, text: &str) {
        if !text.is_empty() {
            let parent = self.current();
            self.doc.append(
                &parent,
                NodeOrText::AppendText(StrTendril::from_slice(text)),
            );
        }
    }

    pub(super) fn append_comment_to(&mut self, parent: NodeId, text: &str) {
        let id = self.doc.create_comment(StrTendril::from_slice(text));
        self.doc.append(&parent, NodeOrText::AppendNode(id));
    }

    pub(super) fn append_comment(&mut self, text: &str) {
        self.append_comment_to(self.current(), text);
    }

    // ---- the stack of open elements ----

    pub(super) fn pop(&mut self) {
        self.open.pop();
    }

    pub(super) fn in_scope(&self, name: &LocalName, scope: Scope) -> bool {
        for (_, n) in self.open.iter().rev() {
            if n == name {
                return true;
            }
            if bounds(scope, n) {
                return false;
            }
        }
        false
    }

    pub(super) fn node_in_scope(&self, node: NodeId, scope: Scope) -> bool {
        for (id, n) in self.open.iter().rev() {
            if *id == node {
                return true;
            }
            if bounds(scope, n) {
                return false;
            }
        }
        false
    }

    /// Pop elements up to and including the last one named `name`.
    pub(super) fn pop_until(&mut self, name: &LocalName) {
        while let Some((_, n)) = self.open.pop() {
            if n == *name {
                break;
            }
        }
    }

    /// Pop elements up to and including the last one `pred` accepts.
    pub(super) fn pop_until_any(&mut self, pred: fn(&LocalName) -> bool) {
        while let Some((_, n)) = self.open.pop() {
            if pred(&n) {
                break;
            }
        }
    }

    /// Pop while the current node is one whose end tag is implied (but not `except`).
    pub(super) fn implied_end_tags(&mut self, except: Option<&LocalName>) {
        while let Some((_, n)) = self.open.last() {
            let implied = matches!(
                *n,
                local_name!("dd")
                    | local_name!("dt")
                    | local_name!("li")
                    | local_name!("option")
                    | local_name!("optgroup")
                    | local_name!("p")
                    | local_name!("rb")
                    | local_name!("rp")
                    | local_name!("rt")
                    | local_name!("rtc")
            );
            if !implied || Some(n) == except {
                break;
            }
            self.open.pop();
        }
    }

    pub(super) fn close_p_in_button_scope(&mut self) {
        if self.in_scope(&local_name!("p"), Scope::Button) {
            self.implied_end_tags(Some(&local_name!("p")));
            self.pop_until(&local_name!("p"));
        }
    }

    // ---- active formatting elements ----

    /// Re-open the formatting elements that were closed implicitly (`<p><b>a<p>b`).
    pub(super) fn reconstruct_formatting(&mut self) {
        let on_stack =
            |open: &[(NodeId, LocalName)], node: NodeId| open.iter().any(|(id, _)| *id == node);
        let Some(last) = self.formatting.len().checked_sub(1) else {
            return;
        };
        match &self.formatting[last] {
            Format::Marker => return,
            Format::Element(node, _) if on_stack(&self.open, *node) => return,
            Format::Element(..) => {}
        }
        let mut first = last;
        while first > 0 {
            match &self.formatting[first - 1] {
                Format::Marker => break,
                Format::Element(node, _) if on_stack(&self.open, *node) => break,
                Format::Element(..) => first -= 1,
            }
        }
        for i in first..self.formatting.len() {
            let Format::Element(_, tag) = &self.formatting[i] else {
                continue;
            };
            let tag = Tag {
                name: tag.name.clone(),
                attrs: tag.attrs.clone(),
            };
            let attrs = tag.attrs.clone();
            let name = tag.name.clone();
            let id = self.insert(tag);
            self.formatting[i] = Format::Element(id, Tag { name, attrs });
        }
    }

    /// Index of the last formatting entry named `name` after the last marker.
    pub(super) fn formatting_entry(&self, name: &LocalName) -> Option<usize> {
        for (i, entry) in self.formatting.iter().enumerate().rev() {
            match entry {
                Format::Marker => return None,
                Format::Element(_, tag) if tag.name == *name => return Some(i),
                Format::Element(..) => {}
            }
        }
        None
    }

    pub(super) fn clear_formatting_to_marker(&mut self) {
        while let Some(entry) = self.formatting.pop() {
            if matches!(entry, Format::Marker) {
                break;
            }
        }
    }
}
