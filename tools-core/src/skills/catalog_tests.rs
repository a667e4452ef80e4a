//! Catalog tests: skills written in the Agent Skills layout to temporary folders.

use super::*;

pub(crate) fn write_skill(root: &Path, rel: &str, name: &str, description: &str) -> PathBuf {
    let dir = root.join(rel);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n\nDo the thing.\n"),
    )
    .unwrap();
    dir
}

fn root(source: SkillSource, dir: &Path) -> SkillRoot {
    SkillRoot {
        source,
        dir: dir.to_path_buf(),
    }
}

#[test]
fn finds_skills_at_any_depth_with_categories() {
    let tmp = tempfile::tempdir().unwrap();
    write_skill(tmp.path(), "plain", "plain", "A plain skill");
    write_skill(tmp.path(), "devops/deploy", "deploy", "Deploy things");
    let catalog = SkillCatalog::new(
        vec![root(SkillSource::User, tmp.path())],
        false,
        BTreeSet::new(),
    );
    let skills = catalog.skills();
    let got: Vec<(&str, Option<&str>, &str)> = skills
        .iter()
        .map(|s| (s.name.as_str(), s.category.as_deref(), s.rel_path.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("plain", None, "plain"),
            ("deploy", Some("devops"), "devops/deploy")
        ]
    );
}

#[test]
fn support_and_tool_folders_are_not_searched() {
    let tmp = tempfile::tempdir().unwrap();
    let skill = write_skill(tmp.path(), "outer", "outer", "Outer");
    write_skill(&skill, "references/old", "old", "An archived package");
    write_skill(tmp.path(), "node_modules/pkg", "pkg", "Not a skill");
    write_skill(
        &skill,
        "nested",
        "nested",
        "A nested skill is still a skill",
    );
    let catalog = SkillCatalog::new(
        vec![root(SkillSource::User, tmp.path())],
        false,
        BTreeSet::new(),
    );
    let names: Vec<String> = catalog.skills().iter().map(|s| s.name.clone()).collect();
    assert_eq!(names, ["outer", "nested"]);
}

#[test]
fn a_later_source_wins_and_the_loser_is_shadowed() {
    let user = tempfile::tempdir().unwrap();
    let extra = tempfile::tempdir().unwrap();
    write_skill(user.path(), "tool", "tool", "user version");
    write_skill(extra.path(), "x/tool", "tool", "extra version");
    let catalog = SkillCatalog::new(
        vec![
            root(SkillSource::User, user.path()),
            root(SkillSource::Extra, extra.path()),
        ],
        true,
        BTreeSet::new(),
    );
    let found = catalog.find("tool").unwrap();
    assert_eq!(found.description, "extra version");
    assert_eq!(found.source, SkillSource::Extra);
    assert_eq!(catalog.shadowed().len(), 1);
    // A bundled skill is the lowest source.
    write_skill(
        user.path(),
        "code-review",
        "code-review",
        "my own review list",
    );
    assert_eq!(
        catalog.find("code-review").unwrap().source,
        SkillSource::User
    );
}

#[test]
fn disabled_and_other_platform_skills_are_hidden() {
    let tmp = tempfile::tempdir().unwrap();
    write_skill(tmp.path(), "off", "off", "disabled");
    let dir = tmp.path().join("elsewhere");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: elsewhere\ndescription: d\nplatforms: [plan9]\n---\nbody\n",
    )
    .unwrap();
    let catalog = SkillCatalog::new(
        vec![root(SkillSource::User, tmp.path())],
        false,
        BTreeSet::from(["off".to_string()]),
    );
    assert!(catalog.skills().is_empty());
}

#[test]
fn the_cache_notices_new_and_edited_skills() {
    let tmp = tempfile::tempdir().unwrap();
    let catalog = SkillCatalog::new(
        vec![root(SkillSource::User, tmp.path())],
        false,
        BTreeSet::new(),
    );
    assert!(catalog.skills().is_empty());
    let dir = write_skill(tmp.path(), "cat/one", "one", "first");
    assert_eq!(catalog.skills().len(), 1);
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: one\ndescription: second, longer\n---\nx\n",
    )
    .unwrap();
    assert_eq!(catalog.skills()[0].description, "second, longer");
}

#[test]
fn lookup_rejects_paths_that_leave_the_sources() {
    assert_eq!(check_lookup_name("/etc/passwd"), Err(LookupError::Absolute));
    assert_eq!(check_lookup_name("C:\\skills"), Err(LookupError::Absolute));
    assert_eq!(check_lookup_name("../outside"), Err(LookupError::Traversal));
    assert_eq!(check_lookup_name("a/../../b"), Err(LookupError::Traversal));
    assert_eq!(check_lookup_name("devops/deploy"), Ok(()));
}

#[test]
fn lookup_by_path_category_form_and_directory_name() {
    let tmp = tempfile::tempdir().unwrap();
    write_skill(tmp.path(), "devops/deploy-dir", "deploy", "d");
    let catalog = SkillCatalog::new(
        vec![root(SkillSource::User, tmp.path())],
        false,
        BTreeSet::new(),
    );
    for name in [
        "deploy",
        "devops/deploy-dir",
        "devops:deploy-dir",
        "deploy-dir",
    ] {
        assert_eq!(catalog.find(name).unwrap().name, "deploy", "{name}");
    }
    match catalog.find("nope") {
        Err(LookupError::NotFound { available, .. }) => assert_eq!(available, ["deploy"]),
        other => panic!("{other:?}"),
    }
}

#[test]
fn front_matter_less_skills_use_folder_name_and_first_line() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("legacy");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("SKILL.md"), "# Legacy\n\nUse it for old things.\n").unwrap();
    let catalog = SkillCatalog::new(
        vec![root(SkillSource::User, tmp.path())],
        false,
        BTreeSet::new(),
    );
    let s = catalog.find("legacy").unwrap();
    assert_eq!(s.description, "Use it for old things.");
}
