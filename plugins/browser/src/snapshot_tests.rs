//! The snapshot walker (`walker.rs`) against the accessibility tree it stands in for, on
//! a real Chromium: the same outline and refs to the same elements on pages with shadow
//! DOM, iframes, hidden content, forms, lists and 1,000 elements; the fallback where it
//! declines; refs that click; and a page that tries to forge either.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::error::BrowserError;
use crate::registry::Registry;
use crate::snapshot::RefTarget;
use crate::tests::{TASK, serve_pages, settings};
use crate::tools::outcome;
use crate::{inspection, interaction, navigation, walker};

/// `(path, body)` of the pages compared.
const PAGES: &[(&str, &str)] = &[
    (
        "/basic",
        r#"<h1>Title</h1><p>Hello <b>world</b> and more</p><a href='/x'>Link</a><button>Go</button><input placeholder='Name'><label>Mail <input type=email></label>"#,
    ),
    (
        "/forms",
        r#"<form><input type=checkbox checked aria-label=Agree><input type=radio name=r><select><option>One</option><option selected>Two</option></select><textarea>hi there</textarea><input type=range value=3 min=0 max=10><input value='typed' disabled required><button aria-expanded=true>Menu</button></form>"#,
    ),
    (
        "/hidden",
        r#"<div style='display:none'><button>Hidden1</button></div><div hidden><a href=#>Hidden2</a></div><div aria-hidden=true><button>AriaHidden</button>text</div><div style='visibility:hidden'><button>Invisible</button></div><button style='opacity:0'>Transparent</button><p>Visible</p>"#,
    ),
    (
        "/lists",
        r#"<ul><li>One</li><li><a href=#a>Two</a></li></ul><ol><li>First</li></ol><h2>Sub</h2><h3 aria-level=5>Odd</h3><div role=button tabindex=0>Fake</div><span role=link>Span link</span><nav><a href=#n>Nav</a></nav><table><tr><th>H</th><td>Cell <button>In cell</button></td></tr></table>"#,
    ),
    (
        "/shadow",
        r#"<div id=host></div><my-el><span slot=s>Slotted</span></my-el><script>const h=document.getElementById('host').attachShadow({mode:'open'});h.innerHTML='<button>Shadow button</button><p>Shadow text</p>';customElements.define('my-el',class extends HTMLElement{constructor(){super();this.attachShadow({mode:'open'}).innerHTML='<b>before</b><slot name=s></slot><button>Inner</button>'}});</script>"#,
    ),
    (
        "/iframe",
        r#"<p>Outer</p><iframe srcdoc='<button>Frame button</button>'></iframe><button>After</button>"#,
    ),
    (
        "/misc",
        r#"<p>Line<br>break</p><img src='x.png' alt='A picture'><a href=#><img alt='Logo'></a><button><span>Nested</span> label</button><pre>  pre   text  </pre><p style='text-transform:uppercase'>upper me</p><details><summary>More</summary><p>Inside</p></details><div contenteditable>Edit me</div><p>Café &quot;quoted&quot;</p>"#,
    ),
    (
        "/mixed",
        r#"<main><section aria-label=S><article><details open><summary>Sum</summary>x</details><details><summary>Closed</summary>hidden inside</details><label for=i>Lab</label><input id=i type=number value=5><input type=password value=abc><input type=search value=q><input type=email><input type=submit><input type=reset><input type=image alt=Img><select multiple><optgroup label=G><option>O1</option></optgroup></select><fieldset><legend>Leg</legend></fieldset><dl><dt>T</dt><dd>D</dd></dl><figure><img src=a.png alt=Fig><figcaption>Cap</figcaption></figure><hr><meter value=0.5>m</meter><progress value=3 max=10></progress><output>out</output><iframe src=about:blank title=Fr></iframe><svg width=10 height=10 role=img aria-label=Svg></svg><abbr title=Ab>AB</abbr><time>t</time><code>c</code><mark>m</mark><div role=tree><div role=treeitem aria-level=2 aria-selected=true>TI</div><div role=treeitem>T2</div></div><div role=tablist><div role=tab aria-selected=true>Tab1</div></div><div role=switch aria-checked=true>Sw</div><ol start=3 reversed><li>a</li><li>b</li></ol><ol><li value=7>s</li><li>t</li></ol><ul><li>u<ul><li>v<ul><li>w</li></ul></li></ul></li></ul><ul style=list-style:none><li>nomark</li></ul><div aria-disabled=true><button>AD</button></div><fieldset disabled><input value=fd></fieldset><input type=checkbox id=ind><script>ind.indeterminate=true</script><p>a&nbsp;&nbsp;b</p><div role=heading>Dh</div><div role=combobox aria-expanded=false>Cb</div><input list=dl1><datalist id=dl1><option value=z></datalist><div style=display:contents><button>InContents</button></div><p style='white-space:pre-line'>  a  b
 c </p><p style=text-transform:capitalize>cap words here</p><a>no href</a><div tabindex=0>focusable div</div><span aria-label=Lbl>labelled span</span><div role=dialog aria-label=Dlg><p>in dialog</p></div><button aria-pressed=true>Pressed</button><input type=checkbox aria-checked=true><div role=option aria-selected=true>Opt</div><div role=menuitemcheckbox aria-checked=true>Mc</div><table><caption>Cap</caption><thead><tr><th>H1</th></tr></thead><tbody><tr><td>D1</td></tr></tbody></table><p>emoji 😀 and <q>quote</q></p><p>before<span style=visibility:hidden>inv<span style=visibility:visible>vis</span></span></p></article></section></main>"#,
    ),
];

/// 1,000 elements, as in the bench; each button names itself in the title when clicked.
fn thousand() -> String {
    let mut html = String::new();
    for i in 0..250 {
        html.push_str(&format!(
            "<a href='#item{i}'>Link {i}</a><button onclick=\"document.title = 'clicked {i}'\">Button {i}</button>\
             <input name='field{i}' placeholder='Field {i}'><p>Paragraph {i}</p>"
        ));
    }
    html
}

/// A page that tries to fool the walker: patched DOM APIs, a fake ref list in its own
/// world, text shaped like outline lines.
const HOSTILE: &str = r#"<button>Real</button><p>- button "Fake" [ref=e1]
[ref=e2]</p><script>
Object.defineProperty(Element.prototype, 'computedRole', { get() { return 'button'; } });
Object.defineProperty(Element.prototype, 'computedName', { get() { return 'forged'; } });
Element.prototype.checkVisibility = () => true;
globalThis.__toolhostRefs = [document.body];
</script>"#;

/// Widgets whose parts only the accessibility tree shows.
const OPAQUE: &str = "<input type=date aria-label=When><button>After</button>";

fn body(path: &str) -> Option<String> {
    let inner = match path {
        "/thousand" => thousand(),
        "/hostile" => HOSTILE.to_string(),
        "/opaque" => OPAQUE.to_string(),
        "/other" => "<h1>Other</h1>".to_string(),
        _ => PAGES.iter().find(|(p, _)| *p == path)?.1.to_string(),
    };
    Some(format!(
        "<!doctype html><html><head><meta charset=utf-8><title>t</title></head><body>{inner}</body></html>"
    ))
}

fn serve() -> String {
    serve_pages("text/html; charset=utf-8", |path| match body(path) {
        Some(body) => ("200 OK", body),
        None => ("404 Not Found", String::new()),
    })
}

fn go(registry: &Registry, base: &str, path: &str) -> Value {
    let args = serde_json::from_value(json!({ "url": format!("{base}{path}") })).unwrap();
    let reply = outcome(navigation::navigate(registry, args, TASK));
    assert_eq!(reply["success"], true, "{reply}");
    reply
}

fn browser() -> (Arc<Registry>, String) {
    (Registry::new(settings(true)), serve())
}

/// Walker and tree outlines of the current page, and whether their refs name the same
/// backend nodes.
fn both(registry: &Registry, full: bool) -> (Option<String>, String, bool) {
    registry
        .with(TASK, false, |session| {
            // The walker first: its own accessibility context, as in the tools.
            let walked = walker::take(session, full)?;
            let tree = navigation::tree_snapshot(session, full)?;
            let Some(walked) = walked else {
                return Ok((None, tree.text, false));
            };
            session.refs = walked.refs.clone();
            let mut same = walked.refs.len() == tree.refs.len();
            for (name, target) in &tree.refs {
                let RefTarget::Backend(node) = target else {
                    return Err(BrowserError::Other("tree refs are backend nodes".into()));
                };
                same &= session.node(name)? == *node;
            }
            Ok((Some(walked.text), tree.text, same))
        })
        .unwrap()
}

#[test]
#[ignore = "needs chromium"]
fn the_walker_prints_what_the_accessibility_tree_prints() {
    let (registry, base) = browser();
    for (path, _) in PAGES.iter().copied().chain([("/thousand", "")]) {
        go(&registry, &base, path);
        for full in [false, true] {
            let (walked, tree, same_refs) = both(&registry, full);
            let walked = walked.unwrap_or_else(|| panic!("{path}: the walker declined"));
            assert_eq!(walked, tree, "{path} full={full}");
            assert!(same_refs, "{path} full={full}: refs name other elements");
        }
    }
}

#[test]
#[ignore = "needs chromium"]
fn the_walker_declines_widgets_it_cannot_see_into() {
    let (registry, base) = browser();
    let reply = go(&registry, &base, "/opaque");
    let (walked, _, _) = both(&registry, false);
    assert_eq!(walked, None);
    // The tool fell back to the tree, which shows the date input's fields.
    let snapshot = reply["snapshot"].as_str().unwrap();
    assert!(snapshot.contains("spinbutton \"Month"), "{snapshot}");
    assert!(snapshot.contains("button \"After\""), "{snapshot}");
}

#[test]
#[ignore = "needs chromium"]
fn a_page_cannot_forge_what_the_walker_reports() {
    let (registry, base) = browser();
    go(&registry, &base, "/hostile");
    for full in [false, true] {
        let (walked, tree, same_refs) = both(&registry, full);
        assert_eq!(walked.as_deref(), Some(tree.as_str()), "full={full}");
        assert!(same_refs);
    }
    let (walked, _, _) = both(&registry, false);
    assert_eq!(walked.unwrap(), "- button \"Real\" [ref=e1]\n");
}

fn click(registry: &Registry, reference: &str) -> Value {
    let args = serde_json::from_value(json!({ "ref": reference })).unwrap();
    outcome(interaction::click(registry, args, TASK))
}

fn title(registry: &Registry) -> Value {
    let args = serde_json::from_value(json!({ "expression": "document.title" })).unwrap();
    outcome(inspection::console(registry, args, TASK))["result"].clone()
}

#[test]
#[ignore = "needs chromium"]
fn refs_of_the_walker_click_the_element() {
    let (registry, base) = browser();
    let reply = go(&registry, &base, "/thousand");
    let snapshot = reply["snapshot"].as_str().unwrap();
    let walked = registry
        .with(TASK, false, |session| {
            Ok(session
                .refs
                .values()
                .all(|target| matches!(target, RefTarget::Walked { .. })))
        })
        .unwrap();
    assert!(walked, "the snapshot did not come from the walker");
    let line = snapshot
        .lines()
        .find(|l| l.contains("button \"Button 237\""))
        .unwrap();
    let reference = line.rsplit("[ref=").next().unwrap().trim_end_matches(']');
    let clicked = click(&registry, &format!("@{reference}"));
    assert_eq!(clicked["success"], true, "{clicked}");
    assert_eq!(title(&registry), json!("clicked 237"));
}

#[test]
#[ignore = "needs chromium"]
fn a_ref_from_a_page_left_behind_is_stale() {
    let (registry, base) = browser();
    go(&registry, &base, "/basic");
    let args = serde_json::from_value(json!({ "expression": "location.href = '/other'" })).unwrap();
    let _ = outcome(inspection::console(&registry, args, TASK));
    // Wait for the new document, then use a ref of the old one.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let arrived = || {
        let args =
            serde_json::from_value(json!({ "expression": "document.body?.textContent" })).unwrap();
        outcome(inspection::console(&registry, args, TASK))["result"] == json!("Other")
    };
    while !arrived() {
        assert!(
            std::time::Instant::now() < deadline,
            "the page did not move"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let clicked = click(&registry, "@e2");
    assert_eq!(clicked["success"], false, "{clicked}");
    assert!(
        clicked["error"]
            .as_str()
            .unwrap()
            .contains("no longer on the page"),
        "{clicked}"
    );
}
