//! Property tests: obfuscating or wrapping a dangerous command keeps it flagged (with the
//! same rule); quoting any command as data makes it benign; the fast path and the full
//! parser always agree.

use proptest::prelude::*;

use super::detect::{analyze, detect};

/// (command words, expected rule key, hardline).
const DANGEROUS: &[(&[&str], &str)] = &[
    (&["rm", "-rf", "/"], "hardline.rm_root"),
    (&["rm", "-r", "-f", "/etc"], "hardline.rm_system_dir"),
    (&["rm", "-rf", "build"], "fs.recursive_delete"),
    (&["mkfs.ext4", "/dev/sdb1"], "hardline.mkfs_device"),
    (&["dd", "if=/dev/zero", "of=/dev/sda"], "hardline.dd_device"),
    (&["kill", "-9", "-1"], "hardline.kill_all"),
    (&["shutdown", "-h", "now"], "hardline.shutdown"),
    (&["reboot"], "hardline.shutdown"),
    (&["chmod", "777", "shared"], "fs.world_writable"),
    (&["chown", "-R", "root", "/srv"], "fs.chown_root_recursive"),
    (
        &["git", "push", "--force", "origin", "main"],
        "git.force_push",
    ),
    (&["git", "reset", "--hard"], "git.reset_hard"),
    (&["git", "branch", "-D", "old"], "git.branch_force_delete"),
    (&["git", "clean", "-fdx"], "git.clean_force"),
    (&["systemctl", "stop", "nginx"], "system.service_stop"),
    (&["pkill", "-9", "python"], "process.force_kill"),
    (&["docker", "system", "prune", "-a"], "container.remove"),
    (&["kubectl", "delete", "pod", "x"], "cluster.kubectl_delete"),
    (&["terraform", "destroy"], "infra.destroy"),
    (&["iptables", "-F"], "system.firewall_flush"),
    (&["crontab", "-r"], "system.crontab_remove"),
    (&["psql", "-c", "DROP TABLE users"], "db.sql_drop"),
    (&["redis-cli", "FLUSHALL"], "db.redis_flush"),
    (&["find", ".", "-delete"], "fs.find_delete"),
    (&["userdel", "bob"], "system.user_change"),
];

const BENIGN: &[&str] = &[
    "ls -la",
    "git status",
    "cargo test -p x",
    "npm run build",
    "rm notes.txt",
    "git branch -d merged",
    "python3 -m pytest -q",
    "grep -rn foo src/",
];

/// Quote a word for the shell.
fn single_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

fn fullwidth(word: &str) -> String {
    word.chars()
        .map(|c| match c {
            'a'..='z' => char::from_u32(c as u32 - 'a' as u32 + 0xFF41).unwrap_or(c),
            _ => c,
        })
        .collect()
}

/// Obfuscate one word (`kind` picks how) the way a shell still reads as the same word.
fn obfuscate_word(word: &str, kind: u8, pos: usize) -> String {
    let n = word.chars().count().max(1);
    let cut = word
        .char_indices()
        .nth(pos % n)
        .map_or(word.len(), |(i, _)| i);
    let (a, b) = word.split_at(cut);
    // A word with spaces must stay one word: only whole-word quoting keeps it so.
    let kind = if word.contains(' ') { kind % 2 } else { kind };
    match kind % 7 {
        0 => single_quote(word),
        1 => format!("\"{}\"", word.replace(['"', '\\', '$', '`'], "")),
        2 => format!("{a}''{b}"),
        3 => format!("{a}\"\"{b}"),
        4 if b.starts_with(|c: char| c.is_ascii_alphabetic()) => format!("{a}\\{b}"),
        5 => format!("{a}\u{1b}[0m{b}"),
        _ => word.to_string(),
    }
}

fn join_with(words: &[String], separator: u8) -> String {
    let sep = match separator % 4 {
        0 => " ",
        1 => "${IFS}",
        2 => " \\\n ",
        _ => "\t",
    };
    words.join(sep)
}

fn wrap(command: String, wrapper: u8) -> String {
    match wrapper % 9 {
        0 => command,
        1 => format!("sudo {command}"),
        2 => format!("sudo -u root -n {command}"),
        3 => format!("timeout 5 {command}"),
        4 => format!("nice -n 5 {command}"),
        5 => format!("env A=1 {command}"),
        6 => format!("bash -c {}", single_quote(&command)),
        7 => format!("echo start && {command}"),
        _ => format!("( {command} )"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn obfuscated_dangerous_commands_stay_flagged(
        index in 0..DANGEROUS.len(),
        kinds in proptest::collection::vec(0u8..8, 6),
        positions in proptest::collection::vec(0usize..8, 6),
        separator in 0u8..4,
        wrapper in 0u8..9,
        path_prefix in any::<bool>(),
        wide in any::<bool>(),
    ) {
        let (words, key) = DANGEROUS[index];
        let mut out: Vec<String> = words
            .iter()
            .enumerate()
            .map(|(i, w)| obfuscate_word(w, kinds[i % kinds.len()], positions[i % positions.len()]))
            .collect();
        if path_prefix && !words[0].contains('/') {
            out[0] = format!("/usr/bin/{}", words[0]);
        } else if wide {
            out[0] = fullwidth(words[0]);
        }
        let command = wrap(join_with(&out, separator), wrapper);
        let verdict = detect(&command);
        let keys = verdict.rule_keys();
        prop_assert!(keys.iter().any(|k| k == key), "{:?} lost {}: {:?}", command, key, keys);
        if key.starts_with("hardline.") {
            prop_assert!(verdict.hardline(), "{:?} not hardline: {:?}", command, keys);
        }
    }

    #[test]
    fn commands_quoted_as_data_are_benign(
        index in 0..(DANGEROUS.len() + BENIGN.len()),
        carrier in 0u8..7,
    ) {
        let text = if index < DANGEROUS.len() {
            DANGEROUS[index].0.join(" ")
        } else {
            BENIGN[index - DANGEROUS.len()].to_string()
        };
        let quoted = single_quote(&text);
        let command = match carrier {
            0 => format!("echo {quoted}"),
            1 => format!("git commit -m {quoted}"),
            2 => format!("grep -rnF -- {quoted} src"),
            3 => format!("printf '%s\\n' {quoted} >> notes.txt"),
            4 => format!("rg -e {quoted} docs"),
            5 => format!("cat <<'EOF' > notes.md\n{text}\nEOF"),
            _ => format!("echo \"{}\"", text.replace(['"', '\\', '$', '`'], "")),
        };
        let verdict = detect(&command);
        prop_assert!(!verdict.dangerous(), "{:?} flagged: {:?}", command, verdict.rule_keys());
    }

    #[test]
    fn fast_path_agrees_with_the_parser(
        words in proptest::collection::vec(
            prop::sample::select(vec![
                "rm", "-rf", "-r", "/", "/etc", "build", "git", "push", "--force", "reset",
                "--hard", "branch", "-D", "-d", "ls", "-la", "|", "&&", ";", "||", "bash", "sh",
                "curl", "x.sh", "'a b'", "\"c d\"", ">", "out.txt", "2>&1", "chmod", "777",
                "sudo", "timeout", "5", "echo", "'rm -rf /'", "kill", "-9", "-1", "psql", "-c",
                "'DROP TABLE t'", "docker", "stop", "xargs", "find", "-delete", "&", "\n",
                "/dev/sda", ">>", "~/.bashrc", ".env", "tee", "python", "'print(1)'",
            ]),
            1..10,
        ),
    ) {
        let command = words.join(" ");
        let fast = analyze(&command, false).0.rule_keys();
        let full = analyze(&command, true).0.rule_keys();
        prop_assert_eq!(fast, full, "{:?}", command);
    }
}

/// The benchmark corpus (Hermes' mix): the fast path never changes a verdict, and it
/// reads most of the mix.
#[test]
fn fastpath_matches_parser_on_the_corpus() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benches/data/danger-corpus.txt"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let mut distinct: Vec<&str> = text.lines().collect();
    distinct.sort_unstable();
    distinct.dedup();
    let mut fast_count = 0;
    for command in &distinct {
        let (fast, used_fast) = analyze(command, false);
        let (full, _) = analyze(command, true);
        assert_eq!(fast.rule_keys(), full.rule_keys(), "{command:?}");
        fast_count += usize::from(used_fast);
    }
    assert!(
        fast_count * 2 > distinct.len(),
        "fast path read only {fast_count} of {}",
        distinct.len()
    );
}
