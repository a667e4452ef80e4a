//! Reads of credential stores, whatever the reader: any command that is handed a
//! credential file (`grep`, `sed -n p`, `awk 1`, `dd if=`, `openssl -in`, `diff`, `yq`,
//! `strings`, `tar`, a `< file` redirection, a path inside inline interpreter code) reads
//! it, except the few that only name, move or use one without printing it (`ls`, `stat`,
//! `chmod`, `ssh -i`, `kubectl --kubeconfig`).
//!
//! Where this differs from Hermes: docs/hermes/approval.md (section 9).

use super::super::analyze::Analyzer;
use super::super::model::Arg;
use super::super::paths;
use super::super::rules;

/// Commands that take a credential path without printing its content.
fn non_reader(name: &str) -> bool {
    matches!(
        name,
        "ls" | "stat"
            | "test"
            | "["
            | "[["
            | "touch"
            | "mkdir"
            | "chmod"
            | "chown"
            | "chgrp"
            | "rm"
            | "unlink"
            | "rmdir"
            | "shred"
            | "mv"
            | "ln"
            | "realpath"
            | "readlink"
            | "dirname"
            | "basename"
            | "du"
            | "file"
            | "cd"
            | "pushd"
            | "echo"
            | "printf"
            | "export"
            | "ssh"
            | "ssh-add"
            | "ssh-keygen"
            | "ssh-copy-id"
            | "ssh-agent"
            | "kubectl"
            | "helm"
            | "oc"
            | "docker"
            | "podman"
            | "aws"
            | "gcloud"
            | "az"
            | "gh"
            | "gpg"
            | "gpg2"
            | "chattr"
            | "setfacl"
            | "getfacl"
            | "lsattr"
            | "namei"
            | "mosh"
            | "sftp"
            | "git"
            | "which"
            | "type"
            | "command"
            | "ansible"
            | "ansible-playbook"
            | "terraform"
    )
}

/// Flag `fs.secret_read` when `args` (command `name`, wrappers stripped) read a credential
/// file.
pub(crate) fn command(az: &mut Analyzer, name: &str, args: &[Arg<'_>]) {
    if non_reader(name) {
        return;
    }
    let mut prev = "";
    for arg in &args[1..] {
        let w = arg.as_str();
        // `scp -i KEY`, `rsync -e 'ssh -i KEY'`: the key is used, not copied.
        let key_option = prev == "-i" && matches!(name, "scp" | "rsync" | "sshfs" | "sshpass");
        prev = w;
        if key_option || !paths::may_name_secret(w) {
            continue;
        }
        let value = w.split_once('=').map(|(_, v)| v);
        if paths::is_secret_file(w) || value.is_some_and(paths::is_secret_file) {
            az.flag_rule(&rules::SECRET_READ);
            return;
        }
    }
}

/// Interpreter code (inline, heredoc or stdin) that names a credential file.
pub(crate) fn in_code(az: &mut Analyzer, code: &str) {
    if mentions_secret(code) {
        az.flag_rule(&rules::SECRET_READ);
    }
}

/// Files read through `< file` redirections.
pub(crate) fn redirected(az: &mut Analyzer, reads: &[Arg<'_>]) {
    if reads.iter().any(|a| paths::is_secret_file(a.as_str())) {
        az.flag_rule(&rules::SECRET_READ);
    }
}

/// Inline code naming a credential file in a string (`open("/home/u/.ssh/id_rsa")`,
/// `File.read(File.expand_path("~/.aws/credentials"))`).
fn mentions_secret(code: &str) -> bool {
    if !code.contains("/.") && !code.contains("shadow") {
        // Every credential path in code has a dot-directory or is a shadow file.
        return false;
    }
    code.split([
        '\'', '"', '`', ' ', '(', ')', ',', ';', '\n', '\t', '[', ']', '{', '}',
    ])
    .filter(|t| t.contains('/') || t.starts_with('.'))
    .any(paths::is_secret_file)
}
