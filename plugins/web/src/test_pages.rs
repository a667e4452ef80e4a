//! Real-shaped HTML pages for the web plugin's tests.

/// Pages of the shapes `web_extract` meets (navigation, nested lists, tables, code,
/// entities, unclosed and misnested tags, scripts and styles, comments, a declared
/// charset, CR LF, quirks mode, content after `</body>`), for tests that compare our
/// code with dom_query's on real-shaped markup.
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
