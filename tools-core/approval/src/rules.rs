//! The rule catalogue: every finding the detector can report, with its stable key (what
//! `approvals.command_allowlist` stores and `approvals revoke` takes), its default
//! description, and whether it belongs to the hardline floor.
//!
//! Descriptions reuse Hermes' wording where its rule meant the same thing, so users moving
//! over recognise them; keys are ours and never change once released.

/// One rule.
#[derive(Debug, PartialEq, Eq)]
pub struct Rule {
    /// Stable key, e.g. `fs.recursive_delete`.
    pub key: &'static str,
    /// Default human-readable description.
    pub description: &'static str,
    /// Hardline rules can never be approved, allowlisted or bypassed by any mode.
    pub hardline: bool,
}

macro_rules! rules {
    ($($id:ident = $key:literal, $hard:literal, $desc:literal;)*) => {
        $(
            #[doc = $desc]
            pub static $id: Rule = Rule { key: $key, description: $desc, hardline: $hard };
        )*
        /// Every rule, in catalogue order.
        pub static ALL: &[&Rule] = &[$(&$id),*];
    };
}

rules! {
    // --- hardline floor -------------------------------------------------------------
    RM_ROOT = "hardline.rm_root", true, "recursive delete of root filesystem";
    RM_SYSTEM_DIR = "hardline.rm_system_dir", true, "recursive delete of system directory";
    RM_HOME = "hardline.rm_home", true, "recursive delete of home directory";
    MKFS_DEVICE = "hardline.mkfs_device", true, "format filesystem (mkfs) on a device";
    DD_DEVICE = "hardline.dd_device", true, "dd to raw block device";
    WRITE_DEVICE = "hardline.write_device", true, "write to raw block device";
    WIPE_DEVICE = "hardline.wipe_device", true, "wipe raw block device";
    FORK_BOMB = "hardline.fork_bomb", true, "fork bomb";
    KILL_ALL = "hardline.kill_all", true, "kill all processes";
    SHUTDOWN = "hardline.shutdown", true, "system shutdown/reboot";
    SYSRQ = "hardline.sysrq", true, "write to /proc/sysrq-trigger (instant reboot or crash)";
    TOO_LARGE = "hardline.too_large", true, "command too large to analyse";
    POWER_STATE = "hardline.power_state", true, "suspend, hibernate, rescue or emergency mode (takes the machine away)";
    FIREWALL_LOCKOUT = "hardline.firewall_lockout", true, "default-drop firewall policy on input or output (cuts the machine off)";
    STORAGE_DESTROY = "hardline.storage_destroy", true, "storage pool, dataset, volume group or logical volume destroyed";
    ENGINE_RESET = "hardline.container_reset", true, "container engine reset (every container, image and volume)";
    MASS_OVERWRITE = "hardline.mass_overwrite", true, "every file under root, a home or a system directory emptied or overwritten";

    // --- files and devices ----------------------------------------------------------
    RM_RECURSIVE = "fs.recursive_delete", false, "recursive delete";
    RM_SYSTEM_PATH = "fs.delete_system_path", false, "delete in system path";
    FIND_DELETE = "fs.find_delete", false, "find -delete";
    FIND_EXEC_RM = "fs.find_exec_rm", false, "find -exec/-execdir rm";
    XARGS_RM = "fs.xargs_rm", false, "xargs with rm";
    WINDOWS_DELETE = "fs.windows_delete", false, "Windows cmd destructive delete";
    POWERSHELL_DELETE = "fs.powershell_delete", false, "Windows PowerShell destructive delete";
    WORLD_WRITABLE = "fs.world_writable", false, "world/other-writable permissions";
    CHOWN_ROOT = "fs.chown_root_recursive", false, "recursive chown to root";
    MKFS_FILE = "fs.format_image", false, "format filesystem (mkfs) on an image file";
    PARTITION = "fs.partition_table", false, "partition table change";
    DD_OVERWRITE = "fs.dd_overwrite", false, "disk copy (dd) onto a system or sensitive file";
    SYSTEM_CONFIG = "fs.system_config_write", false, "overwrite system config";
    SENSITIVE_FILE = "fs.sensitive_file_write", false, "overwrite of SSH, shell-rc or credential file";
    AGENT_CONFIG = "fs.agent_config_write", false, "edit of the agent's own config or secrets";
    PROJECT_ENV = "fs.project_env_write", false, "overwrite project env/config";
    SECRET_READ = "fs.secret_read", false, "read of SSH private key or credential file";
    SYSTEM_PERMISSIONS = "fs.system_permissions", false, "recursive permission, ownership, ACL or attribute change on a system path, or a setuid/setgid bit";
    LOG_WIPE = "fs.log_wipe", false, "wipe, truncate or delete of system logs";

    // --- processes, services, system --------------------------------------------------
    SERVICE_STOP = "system.service_stop", false, "stop/restart system service";
    FORCE_KILL = "process.force_kill", false, "force kill processes";
    KILL_REGEX = "process.kill_by_regex", false, "kill processes by regex (killall -r)";
    SELF_KILL = "process.self_terminate", false, "kill agent process (self-termination)";
    KILL_LOOKUP = "process.kill_by_lookup", false, "kill process via pgrep/pidof expansion";
    GATEWAY = "agent.gateway_control", false, "stop/restart agent gateway (kills running agents)";
    FIREWALL = "system.firewall_flush", false, "firewall flush/disable";
    USER_CHANGE = "system.user_change", false, "user or password change";
    CRON_REMOVE = "system.crontab_remove", false, "crontab removal";
    CRON_INSTALL = "system.crontab_install", false, "crontab replaced from a pipe or file";
    SUDO_FLAG = "system.sudo_privilege_flag", false, "sudo with privilege flag (stdin/askpass/shell)";
    MOUNT = "system.mount", false, "mount, unmount or remount of a file system";
    NETWORK_DOWN = "system.network_down", false, "network interface or route taken down or deleted";
    SECURITY_DISABLE = "system.security_disable", false, "SELinux, AppArmor or ASLR disabled";

    // --- network ------------------------------------------------------------------------
    REVERSE_SHELL = "net.reverse_shell", false, "reverse shell (a shell wired to a network connection)";
    CLOUD_METADATA = "net.cloud_metadata", false, "cloud instance-metadata endpoint (instance credentials)";

    // --- code execution ---------------------------------------------------------------
    REMOTE_PIPE = "exec.remote_pipe", false, "pipe remote content to shell or interpreter";
    REMOTE_PROCSUB = "exec.remote_process_substitution", false, "execute remote script via process substitution";
    REMOTE_CMDSUB = "exec.remote_command_substitution", false, "execute remote content via command substitution";
    DECODED_TO_SHELL = "exec.decoded_to_shell", false, "pipe decoded content to shell (possible command obfuscation)";
    INLINE_CODE = "exec.inline_code", false, "inline script that can run commands or change files (-c/-e)";
    DYNAMIC_CODE = "exec.dynamic_code", false, "shell or eval runs code built at run time";
    POWERSHELL_ENCODED = "exec.powershell_encoded", false, "PowerShell encoded command execution";
    CHMOD_THEN_RUN = "exec.chmod_then_run", false, "chmod +x followed by immediate execution";
    DOWNLOAD_THEN_RUN = "exec.download_then_run", false, "runs a file downloaded earlier in the same command";
    RUN_EARLIER_DOWNLOAD = "exec.run_downloaded", false, "runs a file downloaded by an earlier command of this task";
    UNRESOLVED = "exec.unresolved", false, "runs a command or code whose content the analyser cannot resolve";

    // --- git ----------------------------------------------------------------------------
    GIT_RESET_HARD = "git.reset_hard", false, "git reset --hard (destroys uncommitted changes)";
    GIT_FORCE_PUSH = "git.force_push", false, "git force push (rewrites remote history)";
    GIT_REMOTE_DELETE = "git.remote_branch_delete", false, "git push deleting a remote branch";
    GIT_CLEAN = "git.clean_force", false, "git clean with force (deletes untracked files)";
    GIT_BRANCH_DELETE = "git.branch_force_delete", false, "git branch force delete";
    GIT_STASH_DROP = "git.stash_drop", false, "git stash drop/clear (discards stashed changes)";
    GIT_DISCARD = "git.discard_changes", false, "git checkout/restore discarding uncommitted changes";
    GIT_HISTORY = "git.history_rewrite", false, "git history rewrite or reflog expiry";
    GIT_WORKTREE = "git.worktree_destroy", false, "git deleting tracked files or worktrees (rm -r, read-tree --reset, worktree remove --force)";

    // --- containers, clusters, infrastructure --------------------------------------------
    CONTAINER_LIFECYCLE = "container.lifecycle", false, "docker/podman restart/stop/kill/down (container lifecycle)";
    CONTAINER_REMOVE = "container.remove", false, "container, image or volume removal/prune";
    CONTAINER_HOST = "container.host_access", false, "container with privileged or host-root access";
    KUBECTL_DELETE = "cluster.kubectl_delete", false, "kubectl delete";
    HELM_UNINSTALL = "cluster.helm_uninstall", false, "helm uninstall";
    INFRA_DESTROY = "infra.destroy", false, "terraform/pulumi destroy";
    INFRA_APPLY = "infra.unreviewed_apply", false, "terraform/pulumi change applied without review (-auto-approve, -replace, --yes)";
    CLOUD_DELETE = "infra.cloud_delete", false, "cloud resource or storage delete (aws/gcloud/az/gsutil)";
    KUBECTL_DISRUPT = "cluster.kubectl_disrupt", false, "kubectl drain or scale to zero replicas";

    // --- data stores --------------------------------------------------------------------
    SQL_DROP = "db.sql_drop", false, "SQL DROP";
    SQL_TRUNCATE = "db.sql_truncate", false, "SQL TRUNCATE";
    SQL_DELETE = "db.sql_delete_without_where", false, "SQL DELETE without WHERE";
    SQL_UPDATE = "db.sql_update_without_where", false, "SQL UPDATE without WHERE";
    REDIS_FLUSH = "db.redis_flush", false, "Redis FLUSHALL/FLUSHDB";
    MONGO_DROP = "db.mongo_drop", false, "MongoDB drop or delete-all";
    DB_ADMIN_DROP = "db.drop_database", false, "database dropped through its admin client (dropdb, mysqladmin drop)";
    REDIS_DELETE = "db.redis_delete", false, "Redis keys deleted (DEL/UNLINK)";
    KV_DELETE = "db.kv_delete", false, "key-value store keys deleted by prefix or range (etcdctl del --prefix, consul kv delete -recurse)";

    // --- analysis limits (fail closed) -----------------------------------------------------
    UNPARSEABLE = "parse.unparseable", false, "command could not be parsed (unbalanced quotes or invalid syntax)";
    TOO_DEEP = "parse.too_deep", false, "commands nested too deeply to analyse";
    AMBIGUOUS = "parse.ambiguous", false, "control characters, unusual spaces or look-alike punctuation that bash may read differently";

    // --- strict mode ----------------------------------------------------------------------
    STRICT_UNPROVEN = "strict.unproven", false, "not provably read-only (approvals.mode = \"strict\")";
}

/// Rules only a human can approve: writes to toolhost's own configuration, state or
/// plugins would let the agent switch its own approvals off. `mode = "off"`, the smart
/// approver, allowlists and `no_human = "approve"` never pass them.
pub static HUMAN_ONLY: &[&Rule] = &[&AGENT_CONFIG];

/// The rule with this key.
pub fn by_key(key: &str) -> Option<&'static Rule> {
    ALL.iter().copied().find(|rule| rule.key == key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_unique_and_well_formed() {
        let mut seen = std::collections::HashSet::new();
        for rule in ALL {
            assert!(seen.insert(rule.key), "duplicate key {}", rule.key);
            assert!(
                rule.key
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b == b'.' || b == b'_'),
                "{}",
                rule.key
            );
            assert_eq!(
                rule.hardline,
                rule.key.starts_with("hardline."),
                "{}",
                rule.key
            );
        }
        assert_eq!(by_key("fs.recursive_delete"), Some(&RM_RECURSIVE));
        assert_eq!(by_key("nope"), None);
    }
}
