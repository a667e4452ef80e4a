//! Tests of `fuzzy_match.rs`.

use super::*;

fn replace(content: &str, old: &str, new: &str) -> Result<Replaced, MatchError> {
    find_and_replace(content, old, new, false)
}

#[test]
fn exact_unique_match() {
    let r = replace("a = 1\nb = 2\n", "b = 2", "b = 3").unwrap();
    assert_eq!(r.content, "a = 1\nb = 3\n");
    assert_eq!((r.count, r.strategy), (1, Strategy::Exact));
}

#[test]
fn ambiguous_without_replace_all() {
    let err = replace("x\nx\n", "x", "y").unwrap_err();
    assert_eq!(err, MatchError::Ambiguous(2));
    let r = find_and_replace("x\nx\n", "x", "y", true).unwrap();
    assert_eq!((r.content.as_str(), r.count), ("y\ny\n", 2));
}

#[test]
fn self_overlapping_pattern_replaces_non_overlapping() {
    let r = find_and_replace("aaaa", "aa", "b", true).unwrap();
    assert_eq!(r.content, "bb");
}

#[test]
fn empty_identical_and_missing() {
    assert_eq!(replace("x", "", "y").unwrap_err(), MatchError::EmptyOld);
    assert_eq!(replace("x", "x", "x").unwrap_err(), MatchError::Identical);
    assert_eq!(replace("x", "zzz", "y").unwrap_err(), MatchError::NotFound);
}

#[test]
fn line_trimmed_and_reindented() {
    let content = "def f():\n    if x:\n        return 1\n";
    // The model used 2-space indentation.
    let r = replace(content, "  if x:\n    return 1", "  if y:\n    return 2").unwrap();
    assert_eq!(r.strategy, Strategy::LineTrimmed);
    assert_eq!(r.content, "def f():\n    if y:\n        return 2\n");
}

#[test]
fn new_nesting_levels_scale_to_the_file_unit() {
    let content = "class A:\n    def f(self):\n        pass\n";
    let old = "  def f(self):\n    pass";
    let new = "  def f(self):\n    if ok:\n      return 1";
    let r = replace(content, old, new).unwrap();
    assert_eq!(
        r.content,
        "class A:\n    def f(self):\n        if ok:\n            return 1\n"
    );
}

#[test]
fn whitespace_collapsed() {
    let r = replace("let  x =\t1;\n", "let x = 1;", "let x = 2;").unwrap();
    assert_eq!(r.strategy, Strategy::WhitespaceNormalized);
    assert_eq!(r.content, "let x = 2;\n");
    let r = replace("call(a,  b) + rest\n", "call(a, b)", "call(b, a)").unwrap();
    assert_eq!(r.strategy, Strategy::WhitespaceNormalized);
    assert_eq!(r.content, "call(b, a) + rest\n");
}

#[test]
fn escaped_newlines_in_old_string() {
    let r = replace("one\ntwo\n", "one\\ntwo", "three").unwrap();
    assert_eq!(r.strategy, Strategy::EscapeNormalized);
    assert_eq!(r.content, "three\n");
}

#[test]
fn unicode_folding_keeps_file_characters() {
    let content = "say \u{201c}hi\u{201d} \u{2014} then go\n";
    let r = replace(content, "say \"hi\" -- then go", "say \"hi\" -- then stop").unwrap();
    assert_eq!(r.strategy, Strategy::UnicodeNormalized);
    assert_eq!(r.content, "say \u{201c}hi\u{201d} \u{2014} then stop\n");
}

#[test]
fn block_anchor_needs_a_similar_middle() {
    let content = "fn a() {\n    let x = compute(1);\n    x + 1\n}\n";
    let close = "fn a() {\n    let x = compute(2);\n    x + 1\n}";
    let r = replace(content, close, "fn a() {\n    2\n}").unwrap();
    assert_eq!(r.strategy, Strategy::BlockAnchor);
    assert_eq!(r.content, "fn a() {\n    2\n}\n");
    let far = "fn a() {\n    something entirely different here\n    nope\n}";
    assert_eq!(
        replace(content, far, "x").unwrap_err(),
        MatchError::NotFound
    );
}

#[test]
fn escape_drift_is_refused() {
    let content = "def f():\n    return 'it'\nend\n";
    let old = "def f():\n    return \\'it\\'\nend";
    let new = "def f():\n    return \\'them\\'\nend";
    assert_eq!(
        replace(content, old, new).unwrap_err(),
        MatchError::EscapeDrift("\\'")
    );
}

#[test]
fn whitespace_only_pattern_never_matches_empty_spans() {
    assert_eq!(
        replace("a\n\nb\n", " ", "x").unwrap_err(),
        MatchError::NotFound
    );
}

#[test]
fn tab_escape_becomes_real_tab_only_where_file_has_tabs() {
    let content = "if x {\n\tfoo();\n}\n";
    let r = replace(content, "if x {\n    foo();\n}", "if x {\n\\tbar();\n}").unwrap();
    assert_eq!(r.content, "if x {\n\tbar();\n}\n");
}

#[test]
fn closest_sections_points_at_similar_lines() {
    let content = "fn alpha() {}\nfn beta() {}\nfn gamma() {}\n";
    let hint = closest_sections("fn betta() {}", content);
    assert!(hint.contains("   2| fn beta() {}"), "{hint}");
    assert!(closest_sections("zzzzzzzz", "a\nb\n").is_empty());
}
