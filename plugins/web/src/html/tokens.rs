//! The tokenizer of the fast parser: HTML text to start tags, end tags, text, comments
//! and the doctype, for the markup the WHATWG tokenizer reads without a parse error (and
//! a few harmless ones, such as a bare `&` or `<` in text). Anything whose meaning
//! depends on the tokenizer's error recovery — a character reference without its `;`
//! that could be a legacy one (`&amp`, `&copy`), an unterminated comment, `<!-->`, an
//! attribute name with a quote, script data holding `<!--` — is refused with
//! [`Unsupported`], and the page goes to html5ever instead (`html/mod.rs`).
//!
//! Text is found with `memchr` (the next `<` or `&`), so a page of prose costs little
//! more than a copy. The elements whose content is raw text (`script`, `style`,
//! `title`, …) are read to their end tag here and come back as one [`Token::Raw`].

use std::borrow::Cow;

use html5ever::data::NAMED_ENTITIES;
use html5ever::tendril::StrTendril;
use html5ever::{Attribute, LocalName, QualName, local_name, ns};

use super::Unsupported;

/// One token of the input.
#[derive(Debug)]
pub(super) enum Token<'a> {
    /// `<!DOCTYPE html>` (the only doctype accepted: others change the quirks mode).
    Doctype,
    /// A start tag; `self_closing` is `/>`.
    Start(Tag),
    /// An end tag.
    End(LocalName),
    /// Text with its character references decoded.
    Text(Cow<'a, str>),
    /// A comment's text.
    Comment(&'a str),
    /// An element whose content is raw text or RCDATA, read through its end tag.
    Raw(Tag, Cow<'a, str>),
}

/// A start tag's name and attributes (names lowercased, duplicates dropped).
#[derive(Debug)]
pub(super) struct Tag {
    /// The element's name.
    pub name: LocalName,
    /// Its attributes in source order.
    pub attrs: Vec<Attribute>,
}

/// Whether `b` is HTML whitespace as the tokenizer sees it (CR is gone by then).
pub(super) fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\x0C' | b' ')
}

/// Reads tokens from normalised input (no CR, no NUL; see `html/mod.rs`).
pub(super) struct Tokenizer<'a> {
    src: &'a str,
    pos: usize,
}

impl<'a> Tokenizer<'a> {
    /// A tokenizer at the start of `src`.
    pub(super) fn new(src: &'a str) -> Self {
        Self { src, pos: 0 }
    }

    fn bytes(&self) -> &'a [u8] {
        self.src.as_bytes()
    }

    fn src(&self) -> &'a str {
        self.src
    }

    /// Skip one `\n` if it comes next (the newline right after `<pre>`).
    pub(super) fn skip_newline(&mut self) -> Result<(), Unsupported> {
        match self.bytes().get(self.pos) {
            Some(b'\n') => self.pos += 1,
            // A newline written as a reference would be dropped too; not worth it.
            Some(b'&') if self.bytes().get(self.pos + 1) == Some(&b'#') => {
                return Err(Unsupported("character reference after <pre>"));
            }
            _ => {}
        }
        Ok(())
    }

    /// The next token, or `None` at the end of the input.
    pub(super) fn next_token(&mut self) -> Result<Option<Token<'a>>, Unsupported> {
        loop {
            match self.bytes().get(self.pos) {
                None => return Ok(None),
                Some(b'<') => match self.markup()? {
                    Markup::Token(token) => return Ok(Some(token)),
                    Markup::Nothing => continue,
                    // A `<` that opens nothing is text.
                    Markup::Text => {}
                },
                Some(_) => {}
            }
            return self.text().map(|t| Some(Token::Text(t)));
        }
    }

    /// Text up to the next `<` that opens markup; a `<` at `pos` is taken as text.
    fn text(&mut self) -> Result<Cow<'a, str>, Unsupported> {
        let bytes = self.bytes();
        let start = self.pos;
        let mut end = start + 1;
        loop {
            match memchr::memchr(b'<', &bytes[end..]) {
                None => {
                    end = bytes.len();
                    break;
                }
                Some(i) => {
                    end += i;
                    if opens_markup(&bytes[end..]) {
                        break;
                    }
                    end += 1;
                }
            }
        }
        self.pos = end;
        decode(&self.src()[start..end])
    }

    /// What a `<` at `pos` opens.
    fn markup(&mut self) -> Result<Markup<'a>, Unsupported> {
        let bytes = self.bytes();
        let rest = &bytes[self.pos..];
        match rest.get(1) {
            Some(b) if b.is_ascii_alphabetic() => self.start_tag().map(Markup::Token),
            Some(b'/') => match rest.get(2) {
                Some(b) if b.is_ascii_alphabetic() => self.end_tag().map(Markup::Token),
                Some(b'>') => {
                    // `</>` is dropped.
                    self.pos += 3;
                    Ok(Markup::Nothing)
                }
                _ => self.bogus_comment(2).map(Markup::Token),
            },
            Some(b'!') => self.bang().map(Markup::Token),
            Some(b'?') => self.bogus_comment(1).map(Markup::Token),
            _ => Ok(Markup::Text),
        }
    }

    /// `<!--…-->` or `<!DOCTYPE html>`.
    fn bang(&mut self) -> Result<Token<'a>, Unsupported> {
        let rest = &self.src()[self.pos..];
        if let Some(body) = rest.strip_prefix("<!--") {
            if body.starts_with('>') || body.starts_with("->") {
                return Err(Unsupported("abruptly closed comment"));
            }
            let end = memchr::memmem::find(body.as_bytes(), b"-->")
                .ok_or(Unsupported("unterminated comment"))?;
            let text = &body[..end];
            if text.contains("--!") {
                return Err(Unsupported("comment with --!"));
            }
            self.pos += 4 + end + 3;
            return Ok(Token::Comment(text));
        }
        let is_doctype = rest
            .get(..9)
            .is_some_and(|head| head.eq_ignore_ascii_case("<!doctype"));
        if !is_doctype {
            return self.bogus_comment(2);
        }
        let end = rest.find('>').ok_or(Unsupported("unterminated doctype"))?;
        let name = rest[9..end].trim_matches(|c: char| c.is_ascii() && is_space(c as u8));
        if !name.eq_ignore_ascii_case("html")
            || !rest.as_bytes().get(9).is_some_and(|&b| is_space(b))
        {
            return Err(Unsupported("doctype other than <!DOCTYPE html>"));
        }
        self.pos += end + 1;
        Ok(Token::Doctype)
    }

    /// A bogus comment (`<?xml …>`, `<![CDATA[…]]>` outside SVG and MathML): its text
    /// runs from `skip` bytes past the `<` to the first `>`.
    fn bogus_comment(&mut self, skip: usize) -> Result<Token<'a>, Unsupported> {
        let rest = &self.src()[self.pos + skip..];
        let end =
            memchr::memchr(b'>', rest.as_bytes()).ok_or(Unsupported("unterminated comment"))?;
        self.pos += skip + end + 1;
        Ok(Token::Comment(&rest[..end]))
    }

    /// A name (tag or attribute) from `pos`, lowercased, up to a delimiter.
    fn name(&mut self, attribute: bool) -> Result<LocalName, Unsupported> {
        let bytes = self.bytes();
        let start = self.pos;
        let mut end = start;
        while let Some(&b) = bytes.get(end) {
            if is_space(b) || b == b'/' || b == b'>' || (attribute && b == b'=' && end > start) {
                break;
            }
            if !(b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b':' || b == b'.') {
                return Err(Unsupported("unusual character in a name"));
            }
            end += 1;
        }
        if end == bytes.len() {
            return Err(Unsupported("tag cut off by the end of the input"));
        }
        self.pos = end;
        let name = &self.src()[start..end];
        if let Some(known) = common_name(name) {
            return Ok(known);
        }
        Ok(if name.bytes().any(|b| b.is_ascii_uppercase()) {
            LocalName::from(name.to_ascii_lowercase())
        } else {
            LocalName::from(name)
        })
    }

    fn skip_spaces(&mut self) {
        let bytes = self.bytes();
        while bytes.get(self.pos).is_some_and(|&b| is_space(b)) {
            self.pos += 1;
        }
    }

    /// `<name attr=value …>`, with the content of a raw-text element after it.
    fn start_tag(&mut self) -> Result<Token<'a>, Unsupported> {
        self.pos += 1;
        let name = self.name(false)?;
        let mut attrs: Vec<Attribute> = Vec::new();
        loop {
            self.skip_spaces();
            match self.bytes().get(self.pos) {
                None => return Err(Unsupported("tag cut off by the end of the input")),
                Some(b'>') => {
                    self.pos += 1;
                    break;
                }
                Some(b'/') => {
                    if self.bytes().get(self.pos + 1) != Some(&b'>') {
                        return Err(Unsupported("stray / in a tag"));
                    }
                    // `/>` means nothing on an HTML element; void ones have no end.
                    self.pos += 2;
                    break;
                }
                Some(_) => {
                    let attr_name = self.name(true)?;
                    let value = self.attribute_value()?;
                    if !attrs.iter().any(|a| a.name.local == attr_name) {
                        attrs.push(Attribute {
                            name: QualName::new(None, ns!(), attr_name),
                            value: StrTendril::from_slice(&value),
                        });
                    }
                }
            }
        }
        let tag = Tag { name, attrs };
        let raw = match tag.name {
            local_name!("script") => Some(RawKind::Script),
            local_name!("style")
            | local_name!("iframe")
            | local_name!("noembed")
            | local_name!("noframes") => Some(RawKind::Rawtext),
            local_name!("title") => Some(RawKind::Rcdata),
            local_name!("textarea")
            | local_name!("xmp")
            | local_name!("plaintext")
            | local_name!("math")
            | local_name!("svg") => return Err(Unsupported("element the fast parser leaves out")),
            _ => None,
        };
        match raw {
            None => Ok(Token::Start(tag)),
            Some(kind) => {
                let text = self.raw_text(&tag.name, kind)?;
                Ok(Token::Raw(tag, text))
            }
        }
    }

    /// After an attribute's name: `= value` (quoted or not), or nothing (empty value).
    fn attribute_value(&mut self) -> Result<Cow<'a, str>, Unsupported> {
        let save = self.pos;
        self.skip_spaces();
        if self.bytes().get(self.pos) != Some(&b'=') {
            self.pos = save;
            return Ok(Cow::Borrowed(""));
        }
        self.pos += 1;
        self.skip_spaces();
        let bytes = self.bytes();
        let (start, end, next) = match bytes.get(self.pos) {
            Some(&quote @ (b'"' | b'\'')) => {
                let start = self.pos + 1;
                let len = memchr::memchr(quote, &bytes[start..])
                    .ok_or(Unsupported("unterminated attribute value"))?;
                (start, start + len, start + len + 1)
            }
            Some(_) => {
                let start = self.pos;
                let mut end = start;
                while let Some(&b) = bytes.get(end) {
                    if is_space(b) || b == b'>' {
                        break;
                    }
                    if matches!(b, b'"' | b'\'' | b'<' | b'=' | b'`') {
                        return Err(Unsupported("unusual unquoted attribute value"));
                    }
                    end += 1;
                }
                if end == start {
                    return Err(Unsupported("missing attribute value"));
                }
                (start, end, end)
            }
            None => return Err(Unsupported("tag cut off by the end of the input")),
        };
        self.pos = next;
        decode(&self.src()[start..end])
    }

    /// `</name>`, with nothing but spaces before the `>`.
    fn end_tag(&mut self) -> Result<Token<'a>, Unsupported> {
        self.pos += 2;
        let name = self.name(false)?;
        self.skip_spaces();
        if self.bytes().get(self.pos) != Some(&b'>') {
            return Err(Unsupported("end tag with attributes"));
        }
        self.pos += 1;
        Ok(Token::End(name))
    }

    /// The content of a raw-text element up to and through `</name>`.
    fn raw_text(&mut self, name: &LocalName, kind: RawKind) -> Result<Cow<'a, str>, Unsupported> {
        let bytes = self.bytes();
        let start = self.pos;
        let mut at = start;
        let end = loop {
            let i = memchr::memchr(b'<', &bytes[at..]).ok_or(Unsupported("raw text to the end"))?;
            at += i;
            let after = &bytes[at..];
            if after.get(1) == Some(&b'/')
                && after.len() > 2 + name.len()
                && after[2..2 + name.len()].eq_ignore_ascii_case(name.as_bytes())
                && matches!(
                    after[2 + name.len()],
                    b'>' | b'/' | b'\t' | b'\n' | b'\x0C' | b' '
                )
            {
                break at;
            }
            at += 1;
        };
        let content = &self.src()[start..end];
        if kind == RawKind::Script && content.contains("<!--") {
            return Err(Unsupported("script data with <!--"));
        }
        self.pos = end + 2;
        let _ = self.name(false)?;
        self.skip_spaces();
        if self.bytes().get(self.pos) != Some(&b'>') {
            return Err(Unsupported("raw text end tag with attributes"));
        }
        self.pos += 1;
        match kind {
            RawKind::Rcdata => decode(content),
            RawKind::Script | RawKind::Rawtext => Ok(Cow::Borrowed(content)),
        }
    }
}

/// The atom of a frequent tag or attribute name, found without hashing (interning a
/// name was a sizeable share of the tokenizer's time on a large page).
fn common_name(name: &str) -> Option<LocalName> {
    Some(match name {
        "a" => local_name!("a"),
        "p" => local_name!("p"),
        "li" => local_name!("li"),
        "ul" => local_name!("ul"),
        "ol" => local_name!("ol"),
        "em" => local_name!("em"),
        "strong" => local_name!("strong"),
        "b" => local_name!("b"),
        "i" => local_name!("i"),
        "span" => local_name!("span"),
        "div" => local_name!("div"),
        "td" => local_name!("td"),
        "tr" => local_name!("tr"),
        "th" => local_name!("th"),
        "h1" => local_name!("h1"),
        "h2" => local_name!("h2"),
        "h3" => local_name!("h3"),
        "img" => local_name!("img"),
        "table" => local_name!("table"),
        "tbody" => local_name!("tbody"),
        "code" => local_name!("code"),
        "pre" => local_name!("pre"),
        "br" => local_name!("br"),
        "href" => local_name!("href"),
        "src" => local_name!("src"),
        "alt" => local_name!("alt"),
        "class" => local_name!("class"),
        "id" => local_name!("id"),
        "title" => local_name!("title"),
        "rel" => local_name!("rel"),
        "type" => local_name!("type"),
        "style" => local_name!("style"),
        "name" => local_name!("name"),
        "content" => local_name!("content"),
        _ => return None,
    })
}

/// What a `<` opened.
enum Markup<'a> {
    Token(Token<'a>),
    /// Markup that produces no token (`</>`).
    Nothing,
    /// No markup: the `<` is text.
    Text,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum RawKind {
    Script,
    Rawtext,
    Rcdata,
}

/// Whether a `<` at the start of `rest` opens markup (a tag, an end tag, `<!`, `<?`)
/// rather than standing for itself.
fn opens_markup(rest: &[u8]) -> bool {
    match rest.get(1) {
        Some(b) if b.is_ascii_alphabetic() => true,
        Some(b'/' | b'!' | b'?') => true,
        _ => false,
    }
}

/// `text` with its character references decoded (borrowed when it has none).
pub(super) fn decode(text: &str) -> Result<Cow<'_, str>, Unsupported> {
    let Some(first) = memchr::memchr(b'&', text.as_bytes()) else {
        return Ok(Cow::Borrowed(text));
    };
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..first]);
    let mut rest = &text[first..];
    while let Some(amp) = memchr::memchr(b'&', rest.as_bytes()) {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let consumed = reference(rest, &mut out)?;
        rest = &rest[consumed..];
    }
    out.push_str(rest);
    Ok(Cow::Owned(out))
}

/// Decode the character reference at the start of `s` (which starts with `&`) into
/// `out`; the bytes it took.
fn reference(s: &str, out: &mut String) -> Result<usize, Unsupported> {
    let bytes = s.as_bytes();
    match bytes.get(1) {
        Some(b'#') => {
            let (hex, digits_at) = match bytes.get(2) {
                Some(b'x' | b'X') => (true, 3),
                _ => (false, 2),
            };
            let digits = bytes[digits_at..]
                .iter()
                .take_while(|b| {
                    if hex {
                        b.is_ascii_hexdigit()
                    } else {
                        b.is_ascii_digit()
                    }
                })
                .count();
            let end = digits_at + digits;
            if digits == 0 || digits > 7 || bytes.get(end) != Some(&b';') {
                return Err(Unsupported("numeric reference without digits or ;"));
            }
            let value = u32::from_str_radix(&s[digits_at..end], if hex { 16 } else { 10 })
                .map_err(|_| Unsupported("numeric reference"))?;
            let plain = matches!(value, 0x09 | 0x0A | 0x0C | 0x20..=0x7E)
                || (0xA0..=0x10FFFF).contains(&value)
                    && !(0xD800..=0xDFFF).contains(&value)
                    && !(0xFDD0..=0xFDEF).contains(&value)
                    && value & 0xFFFE != 0xFFFE;
            let c = char::from_u32(value)
                .filter(|_| plain)
                .ok_or(Unsupported("numeric reference html5ever rewrites"))?;
            out.push(c);
            Ok(end + 1)
        }
        Some(b) if b.is_ascii_alphanumeric() => {
            let run = bytes[1..]
                .iter()
                .take_while(|b| b.is_ascii_alphanumeric())
                .count();
            let end = 1 + run;
            // The table also holds every prefix of a name, as (0, 0).
            let decoded = if bytes.get(end) == Some(&b';') {
                NAMED_ENTITIES.get(&s[1..=end]).filter(|(cp, _)| *cp != 0)
            } else {
                None
            };
            let Some(&(first, second)) = decoded else {
                // Without a match, `&name` is text, unless a legacy reference (`&amp`,
                // `&copy`, … written without `;`) starts it: its rules differ in text and
                // in attributes.
                let legacy = |n: usize| {
                    NAMED_ENTITIES
                        .get(&s[1..=n])
                        .is_some_and(|(cp, _)| *cp != 0)
                };
                if (1..=run).any(legacy) {
                    return Err(Unsupported("named reference without ;"));
                }
                out.push('&');
                return Ok(1);
            };
            for cp in [first, second] {
                if cp != 0 {
                    out.push(char::from_u32(cp).ok_or(Unsupported("named reference"))?);
                }
            }
            Ok(end + 1)
        }
        // `&` before anything else stands for itself.
        _ => {
            out.push('&');
            Ok(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn character_references_table() {
        let cases: [(&str, Option<&str>); 12] = [
            ("plain text", Some("plain text")),
            ("a &amp; b &lt;c&gt;", Some("a & b <c>")),
            ("&#x41;&#66;&#X43;", Some("ABC")),
            ("AT&T; q=1&b=2 & &", Some("AT&T; q=1&b=2 & &")),
            ("&notin; &NotEqualTilde;", Some("∉ \u{2242}\u{338}")),
            ("&#128512;", Some("😀")),
            // Legacy references without `;` read differently in text and attributes.
            ("x &copy y", None),
            ("&notit;", None),
            // References html5ever rewrites (NUL, C1 controls, surrogates, too large).
            ("&#0;", None),
            ("&#x80;", None),
            ("&#xD800;", None),
            ("&#x110000;", None),
        ];
        for (input, expected) in cases {
            assert_eq!(decode(input).ok().as_deref(), expected, "{input}");
        }
    }

    fn kinds(html: &str) -> Result<Vec<String>, Unsupported> {
        let mut tokenizer = Tokenizer::new(html);
        let mut out = Vec::new();
        while let Some(token) = tokenizer.next_token()? {
            out.push(match token {
                Token::Doctype => "doctype".to_string(),
                Token::Start(tag) => {
                    let attrs: Vec<String> = tag
                        .attrs
                        .iter()
                        .map(|a| format!("{}={}", a.name.local, a.value))
                        .collect();
                    format!("<{} {}>", tag.name, attrs.join(" "))
                }
                Token::End(name) => format!("</{name}>"),
                Token::Text(text) => format!("text {text:?}"),
                Token::Comment(text) => format!("comment {text:?}"),
                Token::Raw(tag, text) => format!("raw {} {text:?}", tag.name),
            });
        }
        Ok(out)
    }

    #[test]
    fn tokens_table() {
        let cases: [(&str, &[&str]); 8] = [
            ("<!DOCTYPE html>", &["doctype"]),
            (
                "<P Class=x ID='y' hidden class=dup>a < b</P >",
                &["<p class=x id=y hidden=>", "text \"a < b\"", "</p>"],
            ),
            ("<br/>x", &["<br >", "text \"x\""]),
            ("<!-- c -- d -->", &["comment \" c -- d \""]),
            ("<![CDATA[x]]>", &["comment \"[CDATA[x]]\""]),
            ("<?xml v?>", &["comment \"?xml v?\""]),
            (
                "<script>if (a<b) x='</p>'</SCRIPT>",
                &["raw script \"if (a<b) x='</p>'\""],
            ),
            ("<title>a &amp; b</title>", &["raw title \"a & b\""]),
        ];
        for (input, expected) in cases {
            assert_eq!(kinds(input).unwrap(), expected, "{input}");
        }
    }

    #[test]
    fn markup_that_depends_on_error_recovery_is_refused() {
        let cases = [
            "<!-->",
            "<!-- never closed",
            "<a href=\"never closed>",
            "<a b\"c=1>",
            "<script><!-- x </script>",
            "<div",
            "</div class=x>",
            "<!DOCTYPE html PUBLIC \"x\">",
            "<svg></svg>",
        ];
        for input in cases {
            assert!(kinds(input).is_err(), "{input}");
        }
    }
}
