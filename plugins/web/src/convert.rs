//! Turning a fetched body into the clean text `web_extract` returns: HTML through a
//! readability-style main-content extractor to Markdown, PDF to plain text, text as is.
//! Images become `[IMAGE: alt]` placeholders (with the link kept when it is a real URL,
//! so inline `data:` blobs never reach the model).

/// Why a body could not be converted.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    /// A media type we do not turn into text (images, archives, …).
    #[error("unsupported content type {0:?} (web_extract reads HTML, PDF and text)")]
    Unsupported(String),
    /// The PDF could not be read.
    #[error("could not read the PDF: {0}")]
    Pdf(String),
}

/// A converted page: its title (may be empty) and its clean text.
#[derive(Debug, PartialEq, Eq)]
pub struct Page {
    /// The document's title.
    pub title: String,
    /// Markdown or plain text.
    pub content: String,
}

/// Convert `body` of `media_type`, fetched from `url` (used to make links absolute).
pub fn convert(media_type: &str, body: &[u8], url: &str) -> Result<Page, ConvertError> {
    let page = match media_type {
        "text/html" | "application/xhtml+xml" | "" => {
            // Valid UTF-8 (nearly every page) is checked far faster than it is
            // repaired; only a page with invalid bytes takes the lossy path.
            let html = std::str::from_utf8(body).map_or_else(
                |_| String::from_utf8_lossy(body),
                std::borrow::Cow::Borrowed,
            );
            html_to_markdown(&html, url)
        }
        "application/pdf" => pdf_to_text(body)?,
        t if t.starts_with("text/")
            || t == "application/json"
            || t.ends_with("+json")
            || t.ends_with("+xml") =>
        {
            Page {
                title: String::new(),
                content: String::from_utf8_lossy(body).into_owned(),
            }
        }
        other => return Err(ConvertError::Unsupported(other.to_string())),
    };
    Ok(Page {
        title: page.title,
        content: image_placeholders(&page.content),
    })
}

/// The main content of an HTML page as Markdown. The page is parsed once. A large page
/// whose own `<article>`/`<main>` holds most of its text is converted from that element
/// (`landmark.rs`); others go through the readability extractor. When it finds no
/// article (a page of navigation only, say), the whole body is converted instead.
pub fn html_to_markdown(html: &str, url: &str) -> Page {
    let config = dom_smoothie::Config {
        text_mode: dom_smoothie::TextMode::Markdown,
        ..Default::default()
    };
    let base = url::Url::parse(url).ok().filter(|u| !u.cannot_be_a_base());
    let doc = dom_query::Document::from(html);
    let readability = dom_smoothie::Readability::with_document(
        doc,
        base.as_ref().map(url::Url::as_str),
        Some(config),
    );
    let article = readability.and_then(|mut r| {
        if html.len() >= crate::landmark::LARGE_PAGE_BYTES
            && let Some(node) = crate::landmark::main_landmark(&r.doc)
        {
            let title = r.get_article_metadata(None).title;
            let content = crate::landmark::markdown(&node, base.as_ref());
            return Ok(Page { title, content });
        }
        r.parse().map(|article| Page {
            title: article.title,
            content: article.text_content.trim().to_string(),
        })
    });
    article.unwrap_or_else(|_| {
        let doc = dom_query::Document::from(html);
        Page {
            title: doc.select("title").text().trim().to_string(),
            content: doc.md(None).trim().to_string(),
        }
    })
}

/// The text of a PDF.
pub fn pdf_to_text(body: &[u8]) -> Result<Page, ConvertError> {
    let text =
        pdf_extract::extract_text_from_mem(body).map_err(|e| ConvertError::Pdf(e.to_string()))?;
    Ok(Page {
        title: String::new(),
        content: text.trim().to_string(),
    })
}

/// `![alt](src)` → `[IMAGE: alt](src)`, or `[IMAGE: alt]` for inline `data:` images.
/// An optional `"title"` after the source is dropped. A scanner rather than a regular
/// expression over the whole page: it jumps from one `![` to the next (the regular
/// expression it replaces, kept in the tests as the reference, cost as much as the
/// rest of the Markdown pass on a 1 MB page).
pub fn image_placeholders(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut copied = 0;
    let mut from = 0;
    while let Some(at) = memchr::memmem::find(&markdown.as_bytes()[from..], b"![") {
        let start = from + at;
        match image_at(&markdown[start..]) {
            Some((len, alt, src)) => {
                out.push_str(&markdown[copied..start]);
                let alt = alt.trim();
                let alt = if alt.is_empty() { "image" } else { alt };
                out.push_str("[IMAGE: ");
                out.push_str(alt);
                out.push(']');
                if !src.is_empty() && !src.starts_with("data:") {
                    out.push('(');
                    out.push_str(src);
                    out.push(')');
                }
                copied = start + len;
                from = copied;
            }
            None => from = start + 1,
        }
    }
    out.push_str(&markdown[copied..]);
    out
}

/// The image at the start of `s` (which starts with `![`): its length, alt and source.
/// The grammar: `![` alt without `]` `](` spaces source (no `)`, no space)
/// [spaces `"`title`"`] spaces `)`, spaces being Unicode whitespace. As in the regular
/// expression it replaces, an empty source may be followed directly by a title
/// (`![a]( "t")`), which is tried when the source read greedily does not close.
fn image_at(s: &str) -> Option<(usize, &str, &str)> {
    let alt_end = 2 + s[2..].find(']')?;
    let alt = &s[2..alt_end];
    let rest = s[alt_end..].strip_prefix("](")?;
    let src_start = s.len() - rest.trim_start().len();
    let src_len = s[src_start..]
        .find(|c: char| c == ')' || c.is_whitespace())
        .unwrap_or(s.len() - src_start);
    let src = &s[src_start..src_start + src_len];
    if let Some(end) = image_end(s, src_start + src_len) {
        return Some((end, alt, src));
    }
    image_end(s, alt_end + 2).map(|end| (end, alt, ""))
}

/// Where the image whose source ends at `after_src` ends: after an optional title
/// (spaces, at least one, then `"…"`) and spaces, just past the `)`.
fn image_end(s: &str, after_src: usize) -> Option<usize> {
    let close = |at: usize| {
        let tail = &s[at..];
        let spaces = tail.len() - tail.trim_start().len();
        tail[spaces..].starts_with(')').then_some(at + spaces + 1)
    };
    let tail = &s[after_src..];
    let spaces = tail.len() - tail.trim_start().len();
    let titled = (spaces > 0 && tail[spaces..].starts_with('"'))
        .then(|| {
            let quote = after_src + spaces;
            let end = quote + 1 + s[quote + 1..].find('"')?;
            close(end + 1)
        })
        .flatten();
    titled.or_else(|| close(after_src))
}

#[cfg(test)]
mod tests {
    use super::*;

    use toolhost_text::LiteralRegex;

    /// The regular expression `image_placeholders` replaced: the reference it must agree
    /// with.
    static IMAGE: LiteralRegex =
        LiteralRegex::new(r#"!\[([^\]]*)\]\(\s*([^)\s]*)(?:\s+"[^"]*")?\s*\)"#);

    fn image_placeholders_by_regex(markdown: &str) -> String {
        let image = IMAGE.get().unwrap();
        image
            .replace_all(markdown, |c: &regex::Captures<'_>| {
                let alt = c[1].trim();
                let alt = if alt.is_empty() { "image" } else { alt };
                match &c[2] {
                    src if src.is_empty() || src.starts_with("data:") => {
                        format!("[IMAGE: {alt}]")
                    }
                    src => format!("[IMAGE: {alt}]({src})"),
                }
            })
            .into_owned()
    }

    #[test]
    fn every_pattern_compiles() {
        assert!(IMAGE.check().is_ok(), "{IMAGE:?}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// The scanner and the regular expression rewrite any Markdown alike.
        #[test]
        fn image_scanner_agrees_with_the_regex(
            pieces in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just("!["), proptest::strategy::Just("]"),
                    proptest::strategy::Just("]("), proptest::strategy::Just(")"),
                    proptest::strategy::Just("("), proptest::strategy::Just("\""),
                    proptest::strategy::Just(" "), proptest::strategy::Just("\n"),
                    proptest::strategy::Just("\u{a0}"), proptest::strategy::Just("data:x"),
                    proptest::strategy::Just("/a.png"), proptest::strategy::Just("alt"),
                    proptest::strategy::Just("!"), proptest::strategy::Just("é"),
                ],
                0..30,
            )
        ) {
            let markdown = pieces.concat();
            proptest::prop_assert_eq!(
                image_placeholders(&markdown),
                image_placeholders_by_regex(&markdown)
            );
        }
    }

    #[test]
    fn image_placeholders_table() {
        let cases = [
            (
                "![a cat](https://e.com/c.png)",
                "[IMAGE: a cat](https://e.com/c.png)",
            ),
            (
                "![](https://e.com/c.png \"T\")",
                "[IMAGE: image](https://e.com/c.png)",
            ),
            // No source, a title straight after `](` (found by the property test).
            ("![a]( \" ![\")", "[IMAGE: a]"),
            (
                "x ![chart](data:image/png;base64,AAAA) y",
                "x [IMAGE: chart] y",
            ),
            ("[link](https://e.com)", "[link](https://e.com)"),
        ];
        for (input, expected) in cases {
            assert_eq!(image_placeholders(input), expected, "{input}");
        }
    }

    #[test]
    fn article_is_extracted_without_navigation() {
        let html = r#"<html><head><title>Ferris Facts</title></head><body>
            <nav><a href="/">Home</a> <a href="/about">About</a> <a href="/x">Menu item</a></nav>
            <article><h1>Ferris Facts</h1>
            <p>Ferris is the unofficial mascot of the Rust programming language, a crab that appears on stickers, shirts and slides at conferences all over the world.</p>
            <p>The crab was drawn by Karen Rustad Tölva, who released it into the public domain so that anyone can use it, <b>remix it</b> and print it.</p>
            <p><img src="/ferris.png" alt="Ferris the crab"></p>
            <p>Many people think Ferris is orange; the official colour is in fact a shade of red-orange that varies between drawings and printings.</p>
            </article>
            <footer>Copyright footer text</footer></body></html>"#;
        let page = convert("text/html", html.as_bytes(), "https://example.com/ferris").unwrap();
        assert_eq!(page.title, "Ferris Facts");
        assert!(
            page.content.contains("unofficial mascot"),
            "{}",
            page.content
        );
        assert!(page.content.contains("**remix it**"), "{}", page.content);
        assert!(
            page.content
                .contains("[IMAGE: Ferris the crab](https://example.com/ferris.png)"),
            "{}",
            page.content
        );
        assert!(!page.content.contains("Menu item"), "{}", page.content);
    }

    #[test]
    fn unsupported_types_are_refused() {
        assert!(matches!(
            convert("image/png", b"\x89PNG", "https://e.com/x.png"),
            Err(ConvertError::Unsupported(_))
        ));
    }

    #[test]
    fn a_large_page_with_a_landmark_keeps_the_shape_of_readability() {
        let mut html = String::from("<html><head><title>Big</title></head><body><nav>");
        html.push_str(&"<a href='/n'>Menu item</a> ".repeat(20));
        html.push_str("</nav><article><h1>Big</h1>");
        let mut n = 0;
        while html.len() < crate::landmark::LARGE_PAGE_BYTES {
            n += 1;
            html.push_str(&format!(
                "<h2>Section {n}</h2><p>Prose of section {n}, with <em>emphasis</em> and \
                 <a href='/ref/{n}'>a reference</a>, long enough to read as an article.</p>\
                 <img src='/img/{n}.png' alt='figure {n}'>"
            ));
        }
        html.push_str("</article><footer>Copyright</footer></body></html>");
        let page = convert("text/html", html.as_bytes(), "https://e.com/big").unwrap();
        assert_eq!(page.title, "Big");
        let content = &page.content;
        assert!(content.contains("## Section 1\n"), "{}", &content[..300]);
        assert!(content.contains("*emphasis*"), "{}", &content[..300]);
        assert!(
            content.contains("[a reference](https://e.com/ref/1)"),
            "{}",
            &content[..300]
        );
        assert!(
            content.contains("[IMAGE: figure 1](https://e.com/img/1.png)"),
            "{}",
            &content[..300]
        );
        assert!(!content.contains("Menu item") && !content.contains("Copyright"));
    }

    /// Fragments of HTML, well-formed or not, for the property test.
    fn html_soup() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let piece = prop_oneof![
            Just("<p>".to_string()),
            Just("</p>".to_string()),
            Just("<article>".to_string()),
            Just("</article>".to_string()),
            Just("<main>".to_string()),
            Just("<table><tr><td>".to_string()),
            Just("</td></tr>".to_string()),
            Just("<ul><li>".to_string()),
            Just("<ol start='9999999999'><li>".to_string()),
            Just("<pre><code>".to_string()),
            Just("<a href='//x/../y'>".to_string()),
            Just("<img src='data:,x' alt='[]()'>".to_string()),
            Just("<br><br>".to_string()),
            Just("<h1>".to_string()),
            Just("<!--".to_string()),
            Just("<script>".to_string()),
            "[^<>]{0,40}",
            ".{0,20}",
        ];
        proptest::collection::vec(piece, 0..60).prop_map(|pieces| pieces.concat())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        #[test]
        fn conversion_never_panics(html in html_soup(), large in proptest::bool::ANY) {
            let mut html = html;
            if large {
                // Past the size bound, so the landmark path runs too.
                let filler = format!("<article><p>{}</p></article>", "word ".repeat(1000));
                while html.len() < crate::landmark::LARGE_PAGE_BYTES {
                    html.push_str(&filler);
                }
            }
            let urls: &[&str] = if large {
                &["https://e.com/a/b"]
            } else {
                &["https://e.com/a/b", "not a url", "data:text/html,x"]
            };
            for url in urls {
                let _ = convert("text/html", html.as_bytes(), url);
            }
        }
    }
}
