//! Property tests for `plugin.toml` parsing: the text comes from a plugin directory or a
//! library anyone may drop into a plugin root, so it must never make the host panic,
//! every refusal must be one line naming what is wrong, and whatever passes must keep
//! the library inside the plugin's own directory.

use std::path::{Component, Path};

use proptest::prelude::*;

use super::manifest::{Manifest, ManifestError};

/// TOML-ish text: mostly manifest keys and punctuation, so the parser gets past the
/// first byte often, with any character mixed in.
fn tomlish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("name".to_string()),
        Just("version".to_string()),
        Just("library".to_string()),
        Just("api".to_string()),
        Just("override".to_string()),
        Just("isolation".to_string()),
        Just(" = ".to_string()),
        Just("\"".to_string()),
        Just("'''".to_string()),
        Just("[".to_string()),
        Just("]".to_string()),
        Just("\n".to_string()),
        Just("\\u00e9".to_string()),
        Just("..".to_string()),
        Just("/".to_string()),
        Just("é".to_string()),
        Just("1.0.0".to_string()),
        any::<char>().prop_map(String::from),
    ];
    proptest::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
}

fn library_name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z][a-z0-9_]{0,12}",
        "[a-z]{1,4}/[a-z]{1,4}",
        Just("..".to_string()),
        Just("../x".to_string()),
        Just("/etc/passwd".to_string()),
        Just("a/../../b".to_string()),
        Just("./x".to_string()),
        Just(String::new()),
        any::<String>(),
    ]
}

fn manifest(library: &str) -> String {
    format!(
        "name = \"demo\"\nversion = \"1.0.0\"\napi = \"^0.1\"\nlibrary = {}\n",
        toml_string(library)
    )
}

/// `s` as a TOML basic string.
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

proptest! {
    #[test]
    fn any_text_is_answered_in_one_line(text in tomlish(), embedded in any::<bool>()) {
        if let Err(err) = Manifest::parse(&text, embedded) {
            let message = err.to_string();
            prop_assert!(!message.contains('\n'), "{:?}", message);
        }
    }

    #[test]
    fn arbitrary_unicode_is_answered(text in any::<String>()) {
        let _ = Manifest::parse(&text, false);
    }

    #[test]
    fn an_accepted_library_stays_inside_the_plugin_directory(library in library_name()) {
        let dir = Path::new("/plugins/demo");
        match Manifest::parse(&manifest(&library), false) {
            Ok(m) => {
                let path = m.library_path(dir).unwrap();
                prop_assert!(path.starts_with(dir), "{}", path.display());
                prop_assert!(
                    path.components().all(|c| matches!(c, Component::RootDir | Component::Normal(_))),
                    "{}", path.display()
                );
            }
            Err(err) => prop_assert!(
                matches!(err, ManifestError::Invalid { field: "library", .. }),
                "{:?}: {}", library, err
            ),
        }
    }

    #[test]
    fn names_and_versions_survive_parsing(
        name in "[a-z0-9][a-z0-9_-]{0,20}",
        major in 0u64..100, minor in 0u64..100, patch in 0u64..100,
    ) {
        let text = format!(
            "name = \"{name}\"\nversion = \"{major}.{minor}.{patch}\"\napi = \"^0.1\"\nlibrary = \"lib\"\n"
        );
        let m = Manifest::parse(&text, false).unwrap();
        prop_assert_eq!(m.name, name);
        prop_assert_eq!(m.version, semver::Version::new(major, minor, patch));
    }
}
