//! The fast path of HTML conversion for large pages: when the page marks its main
//! content itself — one `<article>`, or one `<main>`, holding most of the body's text —
//! that element is converted directly, without the readability scoring.
//!
//! Readability's scoring and cleaning cost about three times the HTML parse on a 1 MB
//! page (README, "web_extract"), and on such a page it would pick the same landmark: the
//! author's own declaration of the main content. Small pages, and pages without one
//! clear landmark, still go through readability.

use dom_query::{Document, NodeData, NodeRef};

/// Pages at least this large (bytes of HTML) may take the fast path.
pub const LARGE_PAGE_BYTES: usize = 256 * 1024;
/// Share of the body's text the landmark must hold (the rest is navigation, footers…).
const MIN_SHARE: f64 = 0.8;
/// Fewest characters of text the landmark must hold.
const MIN_CHARS: usize = 500;
/// Elements left out of the Markdown: page chrome and what never reads as text.
const SKIP_TAGS: [&str; 13] = [
    "script", "style", "meta", "head", "noscript", "template", "nav", "aside", "footer", "form",
    "button", "iframe", "svg",
];

/// The one `<article>` (else the one `<main>`) of `doc` holding most of its text.
pub fn main_landmark(doc: &Document) -> Option<NodeRef<'_>> {
    let body = doc.select_single("body");
    let body = body.nodes().first()?;
    let total = normalized_char_count(body);
    ["article", "main"].iter().find_map(|tag| {
        let found = doc.select(tag);
        let [node] = found.nodes() else {
            return None;
        };
        let chars = normalized_char_count(node);
        (chars >= MIN_CHARS && chars as f64 >= total as f64 * MIN_SHARE).then_some(*node)
    })
}

/// The characters of `node`'s text with runs of whitespace counted as one and a
/// trailing one dropped: `NodeRef::normalized_char_count`, with ASCII counted a byte at
/// a time (that method decodes every character; it was most of this module's cost).
fn normalized_char_count(node: &NodeRef<'_>) -> usize {
    let mut count = 0;
    let mut last_was_space = true;
    for n in std::iter::once(*node).chain(node.descendants_it()) {
        n.query(|n| {
            if let NodeData::Text { contents } = &n.data {
                let (c, space) = count_text(contents, last_was_space);
                count += c;
                last_was_space = space;
            }
        });
    }
    if last_was_space && count > 0 {
        count -= 1;
    }
    count
}

/// Characters of `text` after whitespace collapsing, given whether the text before it
/// ended in whitespace; and whether `text` ends in whitespace (`false` when empty).
fn count_text(text: &str, prev_space: bool) -> (usize, bool) {
    if text.is_ascii() {
        // Every byte is a character; those that are whitespace after whitespace drop.
        let mut prev = u8::from(prev_space);
        let mut repeats = 0;
        for &b in text.as_bytes() {
            let space = ASCII_SPACE[usize::from(b)];
            repeats += usize::from(prev & space);
            prev = space;
        }
        return (text.len() - repeats, !text.is_empty() && prev == 1);
    }
    let mut prev = prev_space;
    let mut count = 0;
    for c in text.chars() {
        let space = c.is_whitespace();
        if !(prev && space) {
            count += 1;
        }
        prev = space;
    }
    (count, prev)
}

/// 1 for the ASCII characters `char::is_whitespace` accepts.
const ASCII_SPACE: [u8; 256] = {
    let mut table = [0; 256];
    let mut b = 0;
    while b < 128 {
        table[b] = (b as u8 as char).is_ascii_whitespace() as u8 | (b == 0x0B) as u8;
        b += 1;
    }
    table
};

/// `node` as Markdown, its links and image sources made absolute against `base`.
pub fn markdown(node: &NodeRef<'_>, base: Option<&url::Url>) -> String {
    if let Some(base) = base {
        absolutize(node, base);
    }
    node.md(Some(&SKIP_TAGS)).trim().to_string()
}

/// Rewrite `href` of links and `src` of images under `node` as absolute URLs.
fn absolutize(node: &NodeRef<'_>, base: &url::Url) {
    // Collected first: the iterator holds the tree borrowed, and `set_attr` changes it.
    for element in node.descendants() {
        let attr = if element.has_name("a") {
            "href"
        } else if element.has_name("img") {
            "src"
        } else {
            continue;
        };
        let Some(value) = element.attr(attr) else {
            continue;
        };
        if value.starts_with('#') || value.starts_with("data:") {
            continue;
        }
        if let Some(absolute) = join(base, value.trim())
            && absolute != *value
        {
            element.set_attr(attr, &absolute);
        }
    }
}

/// `reference` resolved against `base`, as `Url::join` does. A path from the root made
/// only of characters a URL keeps as they are (`/ref/1?a=b`) is appended to the base's
/// origin directly; anything else goes through `Url::join`.
fn join(base: &url::Url, reference: &str) -> Option<String> {
    let plain = |b: u8| {
        b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'-' | b'.'
                    | b'_'
                    | b'~'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
                    | b':'
                    | b'@'
                    | b'/'
                    | b'?'
            )
    };
    let simple = matches!(base.scheme(), "http" | "https")
        && reference.starts_with('/')
        && !reference.starts_with("//")
        && !reference.contains("/.")
        && reference.bytes().all(plain);
    if simple {
        let origin = &base[..url::Position::BeforePath];
        let mut joined = String::with_capacity(origin.len() + reference.len());
        joined.push_str(origin);
        joined.push_str(reference);
        return Some(joined);
    }
    base.join(reference).ok().map(String::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(inner: &str) -> String {
        format!("<html><head><title>T</title></head><body>{inner}</body></html>")
    }

    fn prose(words: usize) -> String {
        "lorem ipsum dolor ".repeat(words / 3)
    }

    #[test]
    fn one_article_holding_the_text_is_the_landmark() {
        let html = body(&format!(
            "<nav><a href='/'>Home</a></nav><article><p>{}</p></article>",
            prose(300)
        ));
        let doc = Document::from(html);
        let node = main_landmark(&doc).unwrap();
        assert!(node.has_name("article"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// The shortcut of `join` gives what `Url::join` gives.
        #[test]
        fn join_is_url_join(
            base in proptest::sample::select(vec![
                "https://e.com/dir/page", "http://u:p@e.com:8080/a/b?q#f", "https://[::1]/",
                "http://xn--caf-dma.example/", "file:///tmp/x",
            ]),
            pieces in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just("/"), proptest::strategy::Just("."),
                    proptest::strategy::Just(".."), proptest::strategy::Just("?"),
                    proptest::strategy::Just("#"), proptest::strategy::Just("a"),
                    proptest::strategy::Just("%2e"), proptest::strategy::Just(" "),
                    proptest::strategy::Just("\\"), proptest::strategy::Just("é"),
                    proptest::strategy::Just("=&;:@!$()*+,~-_"), proptest::strategy::Just("'\"<>`{}|^"),
                ],
                0..12,
            )
        ) {
            let base = url::Url::parse(base).unwrap();
            let reference = pieces.concat();
            proptest::prop_assert_eq!(
                join(&base, &reference),
                base.join(&reference).ok().map(String::from)
            );
        }
    }

    #[test]
    fn char_count_is_dom_querys() {
        let pages = crate::test_pages::CORPUS
            .iter()
            .map(|p| p.to_string())
            .chain([
                body(&prose(300)),
                body("  a \u{a0} b\u{2003}\u{2003}c <b> </b> <i>d</i>\n\t"),
                body("<p></p><p> </p>é ü  x"),
            ]);
        for html in pages {
            let doc = Document::from(html.as_str());
            for node in doc.select("body, p, article, main, b").nodes() {
                assert_eq!(
                    normalized_char_count(node),
                    node.normalized_char_count(),
                    "{html}"
                );
            }
        }
    }

    #[test]
    fn main_is_used_when_there_is_no_article() {
        let html = body(&format!("<main><p>{}</p></main>", prose(300)));
        let doc = Document::from(html);
        assert!(main_landmark(&doc).unwrap().has_name("main"));
    }

    #[test]
    fn no_landmark_when_ambiguous_small_or_a_minority() {
        let text = prose(300);
        let cases = [
            format!("<article><p>{text}</p></article><article><p>{text}</p></article>"),
            "<article><p>short</p></article>".to_string(),
            format!(
                "<article><p>{}</p></article><div><p>{text}</p></div>",
                prose(150)
            ),
            format!("<div><p>{text}</p></div>"),
        ];
        for inner in cases {
            let doc = Document::from(body(&inner));
            assert!(main_landmark(&doc).is_none(), "{inner}");
        }
    }

    #[test]
    fn links_and_images_become_absolute_and_chrome_is_left_out() {
        let html = body(
            "<article><p>See <a href='/ref/1'>the ref</a> and <a href='#top'>top</a>.</p>\
             <img src='pic.png' alt='pic'><nav>Menu</nav><footer>Foot</footer></article>",
        );
        let doc = Document::from(html);
        let node = doc.select_single("article").nodes()[0];
        let base = url::Url::parse("https://e.com/dir/page").unwrap();
        let md = markdown(&node, Some(&base));
        assert!(md.contains("[the ref](https://e.com/ref/1)"), "{md}");
        assert!(md.contains("[top](#top)"), "{md}");
        assert!(md.contains("![pic](https://e.com/dir/pic.png)"), "{md}");
        assert!(!md.contains("Menu") && !md.contains("Foot"), "{md}");
    }

    #[test]
    fn markdown_of_each_element_kind() {
        let base = url::Url::parse("https://e.com/").unwrap();
        let cases = [
            ("<h1>Title</h1>", "# Title"),
            ("<h2>Part</h2>", "## Part"),
            ("<p>one</p><p>two</p>", "one\n\ntwo"),
            (
                "<p><em>soft</em> <strong>hard</strong></p>",
                "*soft* **hard**",
            ),
            ("<a href='/x'>link</a>", "[link](https://e.com/x)"),
            (
                "<img src='/c.png' alt='cat'>",
                "![cat](https://e.com/c.png)",
            ),
            ("<ul><li>a</li><li>b</li></ul>", "- a\n- b"),
            ("<ol><li>a</li><li>b</li></ol>", "1. a\n2. b"),
            ("<blockquote><p>said</p></blockquote>", "> said"),
            ("<pre><code>let x = 1;</code></pre>", "```\nlet x = 1;\n```"),
            ("<p>run <code>ls</code></p>", "run `ls`"),
            (
                "<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>",
                "| k | v |\n| - | - |\n| a | 1 |",
            ),
            ("<p>a<script>evil()</script><nav>menu</nav></p>", "a"),
        ];
        for (inner, expected) in cases {
            let doc = Document::from(body(&format!("<article>{inner}</article>")));
            let node = doc.select_single("article").nodes()[0];
            assert_eq!(markdown(&node, Some(&base)), expected, "{inner}");
        }
    }
}
