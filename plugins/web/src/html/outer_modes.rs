//! The fast parser's insertion modes around the body: initial (the doctype decides the
//! quirks mode), before html, before head, in head, after head, after body and after
//! after body. Whitespace goes where html5ever puts it; markup it moves elsewhere (a
//! head element after the head, `<noscript>` in the head, a stray end tag) is refused.

use html5ever::tendril::StrTendril;
use html5ever::tree_builder::{NodeOrText, QuirksMode, TreeSink};
use html5ever::{LocalName, local_name};

use super::Unsupported;
use super::tokens::Token;
use super::tree::{Builder, Mode, Step, split_space};

impl Builder {
    pub(super) fn initial<'a>(&mut self, token: Token<'a>) -> Result<Step<'a>, Unsupported> {
        match token {
            Token::Text(text) => {
                let (_, rest) = split_space(&text);
                if rest.is_empty() {
                    return Ok(Step::Done);
                }
                let rest = rest.to_string();
                self.no_doctype();
                Ok(Step::Again(Token::Text(rest.into())))
            }
            Token::Comment(text) => {
                self.append_comment_to(self.doc.get_document(), text);
                Ok(Step::Done)
            }
            Token::Doctype => {
                self.doc.append_doctype_to_document(
                    StrTendril::from_slice("html"),
                    StrTendril::new(),
                    StrTendril::new(),
                );
                self.doc.set_quirks_mode(QuirksMode::NoQuirks);
                self.mode = Mode::BeforeHtml;
                Ok(Step::Done)
            }
            other => {
                self.no_doctype();
                Ok(Step::Again(other))
            }
        }
    }

    fn no_doctype(&mut self) {
        self.doc.set_quirks_mode(QuirksMode::Quirks);
        self.quirks = true;
        self.mode = Mode::BeforeHtml;
    }

    pub(super) fn before_html<'a>(&mut self, token: Token<'a>) -> Result<Step<'a>, Unsupported> {
        match token {
            Token::Text(text) => {
                let (_, rest) = split_space(&text);
                if rest.is_empty() {
                    return Ok(Step::Done);
                }
                let rest = rest.to_string();
                self.implied_html();
                Ok(Step::Again(Token::Text(rest.into())))
            }
            Token::Comment(text) => {
                self.append_comment_to(self.doc.get_document(), text);
                Ok(Step::Done)
            }
            Token::Start(tag) if tag.name == local_name!("html") => {
                let name = tag.name.clone();
                let id = self.create(name.clone(), tag.attrs);
                self.doc
                    .append(&self.doc.get_document(), NodeOrText::AppendNode(id));
                self.open.push((id, name));
                self.mode = Mode::BeforeHead;
                Ok(Step::Done)
            }
            Token::Doctype => Err(Unsupported("doctype out of place")),
            Token::End(ref name) if !is_implying_end(name) => {
                Err(Unsupported("stray end tag before the body"))
            }
            other => {
                self.implied_html();
                Ok(Step::Again(other))
            }
        }
    }

    fn implied_html(&mut self) {
        let id = self.create(local_name!("html"), Vec::new());
        self.doc
            .append(&self.doc.get_document(), NodeOrText::AppendNode(id));
        self.open.push((id, local_name!("html")));
        self.mode = Mode::BeforeHead;
    }

    pub(super) fn before_head<'a>(&mut self, token: Token<'a>) -> Result<Step<'a>, Unsupported> {
        match token {
            Token::Text(text) => {
                let (_, rest) = split_space(&text);
                if rest.is_empty() {
                    return Ok(Step::Done);
                }
                let rest = rest.to_string();
                self.insert_implied(local_name!("head"));
                self.mode = Mode::InHead;
                Ok(Step::Again(Token::Text(rest.into())))
            }
            Token::Comment(text) => {
                self.append_comment(text);
                Ok(Step::Done)
            }
            Token::Start(tag) if tag.name == local_name!("head") => {
                self.insert(tag);
                self.mode = Mode::InHead;
                Ok(Step::Done)
            }
            Token::Start(tag) if tag.name == local_name!("html") => {
                Err(Unsupported("second <html>"))
            }
            Token::Doctype => Err(Unsupported("doctype out of place")),
            Token::End(ref name) if !is_implying_end(name) => {
                Err(Unsupported("stray end tag before the body"))
            }
            other => {
                self.insert_implied(local_name!("head"));
                self.mode = Mode::InHead;
                Ok(Step::Again(other))
            }
        }
    }

    pub(super) fn in_head<'a>(&mut self, token: Token<'a>) -> Result<Step<'a>, Unsupported> {
        match token {
            Token::Text(text) => {
                let (space, rest) = split_space(&text);
                self.append_text(space);
                if rest.is_empty() {
                    return Ok(Step::Done);
                }
                let rest = rest.to_string();
                self.pop();
                self.mode = Mode::AfterHead;
                Ok(Step::Again(Token::Text(rest.into())))
            }
            Token::Comment(text) => {
                self.append_comment(text);
                Ok(Step::Done)
            }
            Token::Raw(tag, text)
                if matches!(
                    tag.name,
                    local_name!("title")
                        | local_name!("style")
                        | local_name!("noframes")
                        | local_name!("script")
                ) =>
            {
                self.insert_raw(tag, &text);
                Ok(Step::Done)
            }
            Token::Start(tag) if is_head_void(&tag.name) => {
                self.insert_void(tag);
                Ok(Step::Done)
            }
            Token::Start(tag)
                if matches!(
                    tag.name,
                    local_name!("noscript")
                        | local_name!("template")
                        | local_name!("head")
                        | local_name!("html")
                ) =>
            {
                Err(Unsupported(
                    "<noscript>, <template> or a second <head> in the head",
                ))
            }
            Token::End(local_name!("head")) => {
                self.pop();
                self.mode = Mode::AfterHead;
                Ok(Step::Done)
            }
            Token::Doctype => Err(Unsupported("doctype out of place")),
            Token::End(ref name) if !is_implying_end(name) => {
                Err(Unsupported("stray end tag in the head"))
            }
            other => {
                self.pop();
                self.mode = Mode::AfterHead;
                Ok(Step::Again(other))
            }
        }
    }

    pub(super) fn after_head<'a>(&mut self, token: Token<'a>) -> Result<Step<'a>, Unsupported> {
        match token {
            Token::Text(text) => {
                let (space, rest) = split_space(&text);
                self.append_text(space);
                if rest.is_empty() {
                    return Ok(Step::Done);
                }
                let rest = rest.to_string();
                self.insert_implied(local_name!("body"));
                self.mode = Mode::InBody;
                Ok(Step::Again(Token::Text(rest.into())))
            }
            Token::Comment(text) => {
                self.append_comment(text);
                Ok(Step::Done)
            }
            Token::Start(tag) if tag.name == local_name!("body") => {
                self.insert(tag);
                self.mode = Mode::InBody;
                Ok(Step::Done)
            }
            Token::Start(ref tag)
                if is_head_void(&tag.name)
                    || matches!(
                        tag.name,
                        local_name!("html")
                            | local_name!("head")
                            | local_name!("frameset")
                            | local_name!("template")
                    ) =>
            {
                Err(Unsupported("head element after the head"))
            }
            Token::Raw(ref tag, _)
                if matches!(
                    tag.name,
                    local_name!("title")
                        | local_name!("style")
                        | local_name!("noframes")
                        | local_name!("script")
                ) =>
            {
                Err(Unsupported("head element after the head"))
            }
            Token::Doctype => Err(Unsupported("doctype out of place")),
            Token::End(ref name) if !is_implying_end(name) || *name == local_name!("head") => {
                Err(Unsupported("stray end tag after the head"))
            }
            other => {
                self.insert_implied(local_name!("body"));
                self.mode = Mode::InBody;
                Ok(Step::Again(other))
            }
        }
    }

    pub(super) fn after_body<'a>(&mut self, token: Token<'a>) -> Result<Step<'a>, Unsupported> {
        match token {
            Token::Text(ref text) if split_space(text).1.is_empty() => self.in_body(token),
            Token::Comment(text) => {
                let html = self.open.first().map(|(id, _)| *id);
                let html = html.ok_or(Unsupported("no html element"))?;
                self.append_comment_to(html, text);
                Ok(Step::Done)
            }
            Token::End(local_name!("html")) => {
                self.mode = Mode::AfterAfterBody;
                Ok(Step::Done)
            }
            Token::Doctype => Err(Unsupported("doctype out of place")),
            other => {
                self.mode = Mode::InBody;
                Ok(Step::Again(other))
            }
        }
    }

    pub(super) fn after_after_body<'a>(
        &mut self,
        token: Token<'a>,
    ) -> Result<Step<'a>, Unsupported> {
        match token {
            Token::Text(ref text) if split_space(text).1.is_empty() => self.in_body(token),
            Token::Comment(text) => {
                self.append_comment_to(self.doc.get_document(), text);
                Ok(Step::Done)
            }
            Token::Doctype => Err(Unsupported("doctype out of place")),
            other => {
                self.mode = Mode::InBody;
                Ok(Step::Again(other))
            }
        }
    }
}

/// End tags that the modes before the body treat like any other token (the rest are
/// ignored there, which the fast parser does not follow).
fn is_implying_end(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("head") | local_name!("body") | local_name!("html") | local_name!("br")
    )
}

/// The void elements the head holds.
pub(super) fn is_head_void(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("base")
            | local_name!("basefont")
            | local_name!("bgsound")
            | local_name!("link")
            | local_name!("meta")
    )
}
