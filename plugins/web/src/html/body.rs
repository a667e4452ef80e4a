//! The "in body" insertion mode of the fast parser's tree builder: implied end tags for
//! paragraphs, list items and headings, the formatting elements, void elements, and the
//! end tags. What html5ever recovers from with its heavier machinery — the adoption
//! agency's furthest block, nested `<a>` or `<button>`, `<select>`, `<svg>`, frames,
//! `<template>` — is refused.

use html5ever::{LocalName, local_name};

use super::Unsupported;
use super::outer_modes::is_head_void;
use super::tokens::{Tag, Token};
use super::tree::{Builder, Format, Mode, Scope, Step, bounds, is_heading, is_special};

impl Builder {
    pub(super) fn in_body<'a>(&mut self, token: Token<'a>) -> Result<Step<'a>, Unsupported> {
        match token {
            Token::Text(text) => {
                self.reconstruct_formatting();
                self.append_text(&text);
                Ok(Step::Done)
            }
            Token::Comment(text) => {
                self.append_comment(text);
                Ok(Step::Done)
            }
            Token::Doctype => Err(Unsupported("doctype out of place")),
            Token::Raw(tag, text) => {
                match tag.name {
                    // Processed as in the head, but inserted where we are.
                    local_name!("script")
                    | local_name!("style")
                    | local_name!("noframes")
                    | local_name!("title")
                    | local_name!("iframe")
                    | local_name!("noembed") => {}
                    _ => return Err(Unsupported("raw-text element")),
                }
                self.insert_raw(tag, &text);
                Ok(Step::Done)
            }
            Token::Start(tag) => self.start_in_body(tag),
            Token::End(name) => self.end_in_body(name),
        }
    }

    fn start_in_body<'a>(&mut self, tag: Tag) -> Result<Step<'a>, Unsupported> {
        match tag.name {
            local_name!("address")
            | local_name!("article")
            | local_name!("aside")
            | local_name!("blockquote")
            | local_name!("center")
            | local_name!("details")
            | local_name!("dialog")
            | local_name!("dir")
            | local_name!("div")
            | local_name!("dl")
            | local_name!("fieldset")
            | local_name!("figcaption")
            | local_name!("figure")
            | local_name!("footer")
            | local_name!("header")
            | local_name!("hgroup")
            | local_name!("main")
            | local_name!("menu")
            | local_name!("nav")
            | local_name!("ol")
            | local_name!("p")
            | local_name!("search")
            | local_name!("section")
            | local_name!("summary")
            | local_name!("ul") => {
                self.close_p_in_button_scope();
                self.insert(tag);
            }
            local_name!("h1")
            | local_name!("h2")
            | local_name!("h3")
            | local_name!("h4")
            | local_name!("h5")
            | local_name!("h6") => {
                self.close_p_in_button_scope();
                if self.open.last().is_some_and(|(_, n)| is_heading(n)) {
                    self.pop();
                }
                self.insert(tag);
            }
            local_name!("pre") | local_name!("listing") => {
                self.close_p_in_button_scope();
                self.insert(tag);
                return Ok(Step::DoneSkipNewline);
            }
            local_name!("form") => {
                if self.form.is_some() {
                    return Err(Unsupported("nested <form>"));
                }
                self.close_p_in_button_scope();
                self.form = Some(self.insert(tag));
            }
            local_name!("li") | local_name!("dd") | local_name!("dt") => self.list_item(tag),
            local_name!("button") => {
                if self.in_scope(&local_name!("button"), Scope::Default) {
                    return Err(Unsupported("nested <button>"));
                }
                self.reconstruct_formatting();
                self.insert(tag);
            }
            local_name!("a") => {
                if self.formatting_entry(&local_name!("a")).is_some() {
                    return Err(Unsupported("<a> inside <a>"));
                }
                self.formatting_element(tag)?;
            }
            local_name!("b")
            | local_name!("big")
            | local_name!("code")
            | local_name!("em")
            | local_name!("font")
            | local_name!("i")
            | local_name!("s")
            | local_name!("small")
            | local_name!("strike")
            | local_name!("strong")
            | local_name!("tt")
            | local_name!("u") => self.formatting_element(tag)?,
            local_name!("table") => {
                if !self.quirks {
                    self.close_p_in_button_scope();
                }
                self.insert(tag);
                self.mode = Mode::InTable;
            }
            local_name!("area")
            | local_name!("br")
            | local_name!("embed")
            | local_name!("img")
            | local_name!("keygen")
            | local_name!("wbr")
            | local_name!("input") => {
                self.reconstruct_formatting();
                self.insert_void(tag);
            }
            local_name!("param") | local_name!("source") | local_name!("track") => {
                self.insert_void(tag);
            }
            local_name!("hr") => {
                self.close_p_in_button_scope();
                self.insert_void(tag);
            }
            ref name if is_head_void(name) => self.insert_void(tag),
            local_name!("html")
            | local_name!("body")
            | local_name!("frameset")
            | local_name!("template")
            | local_name!("nobr")
            | local_name!("applet")
            | local_name!("marquee")
            | local_name!("object")
            | local_name!("image")
            | local_name!("select")
            | local_name!("option")
            | local_name!("optgroup")
            | local_name!("rb")
            | local_name!("rtc")
            | local_name!("rp")
            | local_name!("rt")
            | local_name!("caption")
            | local_name!("col")
            | local_name!("colgroup")
            | local_name!("frame")
            | local_name!("head")
            | local_name!("tbody")
            | local_name!("td")
            | local_name!("tfoot")
            | local_name!("th")
            | local_name!("thead")
            | local_name!("tr") => {
                return Err(Unsupported("start tag the fast parser leaves out"));
            }
            _ => {
                self.reconstruct_formatting();
                self.insert(tag);
            }
        }
        Ok(Step::Done)
    }

    /// `<li>`, `<dd>`, `<dt>`: close the open item of the same kind first.
    fn list_item(&mut self, tag: Tag) {
        let closes = |n: &LocalName| {
            if tag.name == local_name!("li") {
                *n == local_name!("li")
            } else {
                matches!(*n, local_name!("dd") | local_name!("dt"))
            }
        };
        let mut to_close = None;
        for (_, n) in self.open.iter().rev() {
            if closes(n) {
                to_close = Some(n.clone());
                break;
            }
            if is_special(n)
                && !matches!(
                    *n,
                    local_name!("address") | local_name!("div") | local_name!("p")
                )
            {
                break;
            }
        }
        if let Some(name) = to_close {
            self.implied_end_tags(Some(&name));
            self.pop_until(&name);
        }
        self.close_p_in_button_scope();
        self.insert(tag);
    }

    fn formatting_element(&mut self, tag: Tag) -> Result<(), Unsupported> {
        self.reconstruct_formatting();
        let mut same = 0;
        for entry in self.formatting.iter().rev() {
            match entry {
                Format::Marker => break,
                Format::Element(_, t) if t.name == tag.name => same += 1,
                Format::Element(..) => {}
            }
        }
        if same >= 3 {
            // The "Noah's Ark" clause compares attributes; not worth following.
            return Err(Unsupported("fourth nested formatting element of a kind"));
        }
        let kept = Tag {
            name: tag.name.clone(),
            attrs: tag.attrs.clone(),
        };
        let id = self.insert(tag);
        self.formatting.push(Format::Element(id, kept));
        Ok(())
    }

    fn end_in_body<'a>(&mut self, name: LocalName) -> Result<Step<'a>, Unsupported> {
        match name {
            local_name!("body") | local_name!("html") => {
                if !self.in_scope(&local_name!("body"), Scope::Default) {
                    return Err(Unsupported("</body> without a body in scope"));
                }
                self.mode = Mode::AfterBody;
                if name == local_name!("html") {
                    return Ok(Step::Again(Token::End(name)));
                }
            }
            local_name!("address")
            | local_name!("article")
            | local_name!("aside")
            | local_name!("blockquote")
            | local_name!("button")
            | local_name!("center")
            | local_name!("details")
            | local_name!("dialog")
            | local_name!("dir")
            | local_name!("div")
            | local_name!("dl")
            | local_name!("fieldset")
            | local_name!("figcaption")
            | local_name!("figure")
            | local_name!("footer")
            | local_name!("header")
            | local_name!("hgroup")
            | local_name!("listing")
            | local_name!("main")
            | local_name!("menu")
            | local_name!("nav")
            | local_name!("ol")
            | local_name!("pre")
            | local_name!("search")
            | local_name!("section")
            | local_name!("summary")
            | local_name!("ul") => {
                if self.in_scope(&name, Scope::Default) {
                    self.implied_end_tags(None);
                    self.pop_until(&name);
                }
            }
            local_name!("form") => {
                let Some(form) = self.form.take() else {
                    return Ok(Step::Done);
                };
                if !self.node_in_scope(form, Scope::Default) {
                    return Ok(Step::Done);
                }
                self.implied_end_tags(None);
                if self.current() != form {
                    return Err(Unsupported("</form> with elements open inside"));
                }
                self.pop();
            }
            local_name!("p") => {
                if !self.in_scope(&name, Scope::Button) {
                    self.insert_implied(local_name!("p"));
                }
                self.implied_end_tags(Some(&name));
                self.pop_until(&name);
            }
            local_name!("li") | local_name!("dd") | local_name!("dt") => {
                let scope = if name == local_name!("li") {
                    Scope::ListItem
                } else {
                    Scope::Default
                };
                if self.in_scope(&name, scope) {
                    self.implied_end_tags(Some(&name));
                    self.pop_until(&name);
                }
            }
            local_name!("h1")
            | local_name!("h2")
            | local_name!("h3")
            | local_name!("h4")
            | local_name!("h5")
            | local_name!("h6") => {
                if self.heading_in_scope() {
                    self.implied_end_tags(None);
                    self.pop_until_any(is_heading);
                }
            }
            local_name!("a")
            | local_name!("b")
            | local_name!("big")
            | local_name!("code")
            | local_name!("em")
            | local_name!("font")
            | local_name!("i")
            | local_name!("s")
            | local_name!("small")
            | local_name!("strike")
            | local_name!("strong")
            | local_name!("tt")
            | local_name!("u") => self.adoption_agency(name)?,
            local_name!("br")
            | local_name!("template")
            | local_name!("option")
            | local_name!("select")
            | local_name!("nobr")
            | local_name!("applet")
            | local_name!("marquee")
            | local_name!("object") => {
                return Err(Unsupported("end tag the fast parser leaves out"));
            }
            _ => self.any_other_end_tag(&name),
        }
        Ok(Step::Done)
    }

    /// Whether any of h1–h6 is in (default) scope.
    fn heading_in_scope(&self) -> bool {
        for (_, n) in self.open.iter().rev() {
            if is_heading(n) {
                return true;
            }
            if bounds(Scope::Default, n) {
                return false;
            }
        }
        false
    }

    /// The end tag of a formatting element, in the cases without a furthest block.
    fn adoption_agency(&mut self, name: LocalName) -> Result<(), Unsupported> {
        let current_listed = self.open.last().is_some_and(|(id, n)| {
            *n == name
                && !self
                    .formatting
                    .iter()
                    .any(|f| matches!(f, Format::Element(node, _) if node == id))
        });
        if current_listed {
            self.pop();
            return Ok(());
        }
        let Some(entry) = self.formatting_entry(&name) else {
            self.any_other_end_tag(&name);
            return Ok(());
        };
        let Format::Element(node, _) = self.formatting[entry] else {
            return Err(Unsupported("formatting marker"));
        };
        let Some(at) = self.open.iter().rposition(|(id, _)| *id == node) else {
            self.formatting.remove(entry);
            return Ok(());
        };
        if !self.node_in_scope(node, Scope::Default) {
            return Ok(());
        }
        if self.open[at + 1..].iter().any(|(_, n)| is_special(n)) {
            return Err(Unsupported("misnested formatting element (furthest block)"));
        }
        self.open.truncate(at);
        self.formatting.remove(entry);
        Ok(())
    }

    /// An end tag with no rule of its own: close the nearest open element of that name
    /// unless a special element comes first.
    fn any_other_end_tag(&mut self, name: &LocalName) {
        for at in (0..self.open.len()).rev() {
            let n = &self.open[at].1;
            if n == name {
                self.implied_end_tags(Some(name));
                self.open.truncate(at);
                return;
            }
            if is_special(n) {
                return;
            }
        }
    }
}
