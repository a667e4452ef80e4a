//! The fast parser against html5ever: on a corpus of real-shaped pages, and on
//! generated markup, every tree the fast parser builds is html5ever's, node for node
//! (same kinds, names, attributes, text, and node ids, so the same creation order).

use dom_query::{Document, NodeData, NodeRef};

use super::{Unsupported, parse};

/// Every node of `doc` in document order: depth, id and data.
fn fingerprint(doc: &Document) -> Vec<String> {
    fn walk(node: &NodeRef<'_>, depth: usize, out: &mut Vec<String>) {
        let data = node
            .query(|n| match &n.data {
                NodeData::Element(e) => {
                    let attrs: Vec<String> = e
                        .attrs
                        .iter()
                        .map(|a| format!("{:?}={:?}", a.name, &*a.value))
                        .collect();
                    format!("element {:?} {attrs:?}", e.name)
                }
                NodeData::Text { contents } => format!("text {:?}", &**contents),
                NodeData::Comment { contents } => format!("comment {:?}", &**contents),
                NodeData::Doctype { name, .. } => format!("doctype {:?}", &**name),
                other => format!("{other:?}"),
            })
            .unwrap_or_default();
        out.push(format!("{depth} {:?} {data}", node.id));
        for child in node.children_it(false) {
            walk(&child, depth + 1, out);
        }
    }
    let mut out = Vec::new();
    walk(&doc.root(), 0, &mut out);
    out
}

/// The fast parser's result on `html`, checked against html5ever's tree when it has one.
fn agrees(html: &str) -> Result<(), Unsupported> {
    let fast = parse(html)?;
    let reference = Document::from(html);
    let (fast, reference) = (fingerprint(&fast), fingerprint(&reference));
    if fast != reference {
        let at = fast
            .iter()
            .zip(&reference)
            .position(|(a, b)| a != b)
            .unwrap_or(fast.len().min(reference.len()));
        let tail = |s: Option<&String>| s.map(|s| s.chars().skip(150).collect::<String>());
        panic!(
            "trees differ at node {at} for {html:?}\nfast:      {:?}\nhtml5ever: {:?}",
            tail(fast.get(at)),
            tail(reference.get(at))
        );
    }
    Ok(())
}

/// Pages of the shapes `web_extract` meets, each one the fast parser must take.
pub(crate) const CORPUS: &[&str] = &[
    // An article with navigation, nested lists, a table, code and a footer.
    r#"<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Release notes &mdash; Example 2.0</title>
  <meta property="og:title" content="Example 2.0 is out">
  <link rel="stylesheet" href="/s.css">
  <style>body { color: #333 } p > a { color: red }</style>
  <script>window.dataLayer = []; if (a < b && c > d) { x(); }</script>
</head>
<body class="post">
  <nav><ul><li><a href="/">Home</a><li><a href="/blog">Blog</a></ul></nav>
  <!-- main content -->
  <main>
    <article>
      <h1>Example 2.0</h1>
      <p>We are happy to announce <strong>Example 2.0</strong> &amp; its new <em>parser</em>.
      <p>Highlights:
      <ul>
        <li>Faster builds
          <ul><li>incremental<li>parallel</ul>
        <li>Smaller binaries
        <li><a href="notes.html#size">Details</a>
      </ul>
      <ol start="3"><li>third<li>fourth</ol>
      <table>
        <tr><th>Version</th><th>Date</th></tr>
        <tr><td>2.0</td><td>2024-05-01</td></tr>
      </table>
      <pre>
fn main() {
    println!("&lt;hello&gt;");
}
</pre>
      <dl><dt>Term<dd>Definition<dt>Other<dd>More</dl>
      <figure><img src="/img/chart.png" alt="A chart"><figcaption>Build times</figcaption></figure>
      <blockquote><p>Quoted text &#8212; with a dash &#x2014; and &copy; 2024.</p></blockquote>
    </article>
  </main>
  <footer><p>&copy; Example &nbsp; <a href=/legal>Legal</a></footer>
</body>
</html>
"#,
    // Tables: implied tbody, rows and cells closed by the next ones, nested table.
    r#"<!doctype html><html><head><title>Tables</title></head><body>
<table class=data>
  <thead><tr><th>Name<th>Value</thead>
  <tr><td>a<td>1
  <tr><td>b<td><b>2</b>
  <tbody><tr><td colspan=2><table><tr><td>inner</td></tr></table></td></tr></tbody>
</table>
<p>After the table.</p>
<table><tr><td><p>para in cell<td>next</table>
</body></html>"#,
    // Unclosed tags, implied paragraphs, formatting re-opened across paragraphs.
    r#"<!DOCTYPE html>
<title>Sloppy</title>
<div id=main>
<p>One <b>bold <i>both</p>
<p>two</p>
<p>Three<div>block ends the paragraph</div>
<h2>Heading<h3>nested heading</h3>
<ul><li>one<li>two<p>para in item</ul>
<span>unclosed span <a href="/x">link</a>
</div>
<p>trailing text</p>
"#,
    // Scripts, styles, noscript (parsed as markup: scripting is off), comments, an
    // iframe, entities in attributes, CDATA-looking text, a BOM-free charset meta.
    r#"<!DOCTYPE html>
<html><head>
<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">
<title>Mixed &lt;content&gt;</title>
<script type="application/ld+json">{"@type": "Article", "headline": "x </b> y"}</script>
</head>
<body>
<script>document.write("<p>not parsed</p>")</script>
<noscript><img src="/pixel.gif" alt=""></noscript>
<article>
<!-- a comment -- with dashes -->
<p>Text with <![CDATA[ fake cdata ]]> inside? No: only in foreign content.</p>
<p>Search: <a href="/s?q=a&amp;b=c&x=1">query</a> &amp; more; a &lt; b; AT&T; 5 &gt; 3</p>
<iframe src="/embed">fallback <b>text</b></iframe>
<style>.x { content: "</p>" }</style>
<p title='single "quoted"' data-x=unquoted hidden>attributes</p>
<p>Line<br>break<br/>and<hr>rule</p>
<p><code>let x = a &lt; b;</code> and <kbd>Ctrl</kbd>+<kbd>C</kbd></p>
<p>Unicode: naïve café — “quotes” 😀 &#128512;</p>
</article>
</body>
</html>
"#,
    // CR LF line ends, upper-case tags, an attribute without a value, a form.
    "<!DOCTYPE HTML>\r\n<HTML>\r\n<HEAD><TITLE>Upper</TITLE></HEAD>\r\n<BODY>\r\n<FORM action=/f><INPUT type=text name=q disabled><BUTTON>Go</BUTTON></FORM>\r\n<P CLASS=x>Para\r\nwith CR LF</P>\r\n<PRE>\r\nfirst line\r\n</PRE>\r\n</BODY>\r\n</HTML>\r\n",
    // No doctype (quirks mode): a table does not close the paragraph.
    "<html><head><title>Quirks</title></head><body><p>Before<table><tr><td>cell</td></tr></table>after</p></body></html>",
    // Text straight after the head, comments after the body and the document.
    "<!DOCTYPE html><head><title>t</title></head>\n<!-- c -->\nHello <em>world</em></body> \n<!-- after body --></html>\n<!-- after html -->",
    // Formatting closed by its end tag inside a block of its own, and stray end tags.
    "<!DOCTYPE html><body><p><em>a <span>b</em> c</span></p></div><p>x</span></p><p><a href=#1>one</a><a href=#2>two</a></p>",
];

#[test]
fn the_corpus_parses_like_html5ever() {
    for (i, html) in CORPUS.iter().enumerate() {
        if let Err(why) = agrees(html) {
            panic!("page {i} left to html5ever: {why:?}");
        }
    }
}

#[test]
fn constructs_it_does_not_handle_are_left_to_html5ever() {
    let cases = [
        "<!DOCTYPE html><body><svg><path d='M0'/></svg></body>",
        "<!DOCTYPE html><body><p>a &amp b</p></body>",
        "<!DOCTYPE html><body><b><p>misnested</b></p></body>",
        "<!DOCTYPE html><body><table><tr>text outside a cell<td>x</table></body>",
        "<!DOCTYPE html><body><a href=1>one<a href=2>two</body>",
        "<!DOCTYPE html><body><select><option>x</select></body>",
        "<!DOCTYPE html><body><!-- unterminated",
        "<!DOCTYPE html><body><textarea>x</textarea>",
        "<!DOCTYPE html PUBLIC \"-//W3C//DTD HTML 4.01//EN\"><body>x",
        "<!DOCTYPE html><body>a\0b",
    ];
    for html in cases {
        assert!(parse(html).is_err(), "{html}");
    }
}

/// Fragments of HTML, well-formed or not, for the property test.
fn html_soup() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let piece = prop_oneof![
        Just("<p>"),
        Just("</p>"),
        Just("<div>"),
        Just("</div>"),
        Just("<b>"),
        Just("</b>"),
        Just("<i>"),
        Just("</i>"),
        Just("<a href='/x'>"),
        Just("</a>"),
        Just("<span>"),
        Just("</span>"),
        Just("<ul>"),
        Just("<li>"),
        Just("</li>"),
        Just("</ul>"),
        Just("<dl><dt>"),
        Just("<dd>"),
        Just("<h2>"),
        Just("</h2>"),
        Just("<h3>"),
        Just("</h3>"),
        Just("<table>"),
        Just("<tr>"),
        Just("<td>"),
        Just("<th>"),
        Just("</td>"),
        Just("</tr>"),
        Just("</table>"),
        Just("<tbody>"),
        Just("<pre>\n"),
        Just("</pre>"),
        Just("<br>"),
        Just("<img src=x alt=y>"),
        Just("<hr>"),
        Just("<form>"),
        Just("</form>"),
        Just("<button>"),
        Just("</button>"),
        Just("<script>x<y</script>"),
        Just("<style>p{}</style>"),
        Just("<title>t</title>"),
        Just("<!-- c -->"),
        Just("</body>"),
        Just("</html>"),
        Just("<body>"),
        Just("<head>"),
        Just("</head>"),
        Just("<meta charset=utf-8>"),
        Just("&amp;"),
        Just("&lt;"),
        Just(" "),
        Just("\n"),
        Just("text"),
        Just("<"),
        Just("&"),
        Just("<em>"),
        Just("</em>"),
        Just("<code>"),
        Just("</code>"),
        Just("<noscript>"),
        Just("</noscript>"),
        Just("<article>"),
        Just("</article>"),
    ];
    (proptest::bool::ANY, proptest::collection::vec(piece, 0..40)).prop_map(|(doctype, pieces)| {
        let doctype = if doctype { "<!DOCTYPE html>" } else { "" };
        format!("{doctype}{}", pieces.concat())
    })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
    /// Whatever the markup, the fast parser either builds html5ever's tree or declines.
    #[test]
    fn any_tree_it_builds_is_html5evers(html in html_soup()) {
        let _ = agrees(&html);
    }

    /// Arbitrary text never makes it panic.
    #[test]
    fn arbitrary_input_never_panics(html in ".{0,200}") {
        let _ = parse(&html);
        let _ = agrees(&html);
    }
}

/// `web_extract`'s conversion of each corpus page, as is (readability) and grown past
/// the landmark bound (the `<article>` fast path), is the same whichever parser ran.
#[test]
fn conversions_agree_whichever_parser_ran() {
    let url = "https://example.com/dir/page.html";
    let filler = "<p>Filler prose with <a href='/f?a=1&amp;b=2'>a link</a>, <em>emphasis</em> \
                  and an image <img src='i.png' alt='pic'>, long enough to read.</p>\n"
        .repeat(2500);
    for (i, html) in CORPUS.iter().enumerate() {
        let large = html
            .find("</article>")
            .map(|at| format!("{}{filler}{}", &html[..at], &html[at..]));
        for page in std::iter::once(html.to_string()).chain(large) {
            let fast = crate::convert::html_to_markdown_with(&page, url, |h| {
                parse(h).unwrap_or_else(|_| Document::from(h))
            });
            let reference =
                crate::convert::html_to_markdown_with(&page, url, |h| Document::from(h));
            assert_eq!(fast, reference, "page {i}, {} bytes", page.len());
        }
    }
}

/// Inputs the property test once found a disagreement on (kept as plain cases).
#[test]
fn past_disagreements() {
    for html in ["</head></head></p>", "\u{10000}!\u{10000}"] {
        let _ = agrees(html);
    }
}
