//! What toolhost reads and keeps is bounded: `<home>/results` is pruned at start, and a
//! `config.toml` that is not a regular file is refused instead of read.

use std::time::{Duration, SystemTime};

use toolhost_tests::plugin_fixtures::isolated;
use toolhost_tests::{TestHome, stderr};

#[test]
fn results_past_their_age_are_pruned_when_toolhost_starts() {
    let home = TestHome::new();
    let results = home.path().join("results");
    std::fs::create_dir_all(&results).unwrap();
    let old = results.join("terminal-old.txt");
    let fresh = results.join("terminal-fresh.txt");
    std::fs::write(&old, "old").unwrap();
    std::fs::write(&fresh, "fresh").unwrap();
    let file = std::fs::File::options().write(true).open(&old).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(3 * 86_400))
        .unwrap();
    home.write_config("[results]\nmax_age_days = 2\n");
    let out = isolated(&home).arg("tools").output().expect("run toolhost");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!old.exists());
    assert!(fresh.exists());
}

#[test]
fn a_config_that_is_a_link_to_dev_zero_is_refused() {
    let home = TestHome::new();
    std::os::unix::fs::symlink("/dev/zero", home.path().join("config.toml")).unwrap();
    let out = isolated(&home).arg("tools").output().expect("run toolhost");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("config.toml is not a regular file"),
        "{}",
        stderr(&out)
    );
}
