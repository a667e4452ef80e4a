//! The text doors (docs/guarded-writes.md), through the real tools and the real approval engine: writes
//! into `<home>/scripts` and `<home>/skills`, cron jobs that run a script, a symlinked
//! home, and secret files reached through a hard link. "Nobody to ask" is the approval
//! engine with no surface; "a human" is a callback that answers.
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};

use crate::approval::{
    ApprovalCallback, ApprovalEngine, ApprovalSettings, Choice, FixedAnswer, MemoryOnly,
    NoObserver, Surfaces,
};
use crate::context::ToolContext;
use crate::files::LocalFileSystemProvider;
use crate::home::Home;
use crate::hooks::Hooks;
use crate::registry::Registry;
use crate::services::CoreServices;
use crate::settings::CoreSettings;

struct Fixture {
    dir: tempfile::TempDir,
    home: Home,
    human: Option<Arc<FixedAnswer>>,
    services: Arc<CoreServices>,
    registry: Registry,
}

/// Core tools in a temporary directory, the home at `<dir>/home` (or reached through
/// `home_link`, a symlink to it), asking `human` (none: nobody to ask).
fn fixture(human: Option<Choice>, home_link: bool) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let real_home = dir.path().join("home");
    std::fs::create_dir_all(&real_home).unwrap();
    std::fs::write(real_home.join("config.toml"), "# original\n").unwrap();
    let home = if home_link {
        let link = dir.path().join("home-link");
        std::os::unix::fs::symlink(&real_home, &link).unwrap();
        Home::at(link)
    } else {
        Home::at(&real_home)
    };
    let human = human.map(|answer| Arc::new(FixedAnswer::new(answer)));
    let surfaces = match &human {
        Some(h) => Surfaces::callback(Arc::clone(h) as Arc<dyn ApprovalCallback>),
        None => Surfaces::none(),
    };
    let gate = ApprovalEngine::new(
        ApprovalSettings::default(),
        Arc::new(MemoryOnly),
        Arc::new(NoObserver),
        surfaces,
    );
    let mut services = CoreServices::new(
        home.clone(),
        CoreSettings::default(),
        Arc::new(Hooks::new()),
        gate,
    );
    services.files = Arc::new(LocalFileSystemProvider::new(dir.path()));
    let services = Arc::new(services);
    let registry = Registry::new();
    assert!(crate::tools::register_core_tools(&registry, &services).is_empty());
    Fixture {
        dir,
        home,
        human,
        services,
        registry,
    }
}

impl Fixture {
    fn call(&self, tool: &str, args: Value) -> Value {
        let r = self
            .registry
            .dispatch_blocking(tool, args, &ToolContext::for_task("t"));
        serde_json::from_str(&r.text).unwrap()
    }

    /// The home's real path.
    fn real_home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn write(&self, path: &Path, content: &str) -> Value {
        self.call("write_file", json!({"path": path, "content": content}))
    }

    fn asked(&self) -> Vec<String> {
        self.human
            .as_ref()
            .map(|h| h.asked().into_iter().map(|r| r.command).collect())
            .unwrap_or_default()
    }

    /// The probe: a script written outside toolhost (the analyser never reads it) that
    /// tries, harmlessly, to write under a system directory, rewrite toolhost's config,
    /// and signal every process and PID 1 (signal 0: a permission check only).
    fn plant_probe(&self) -> PathBuf {
        let scripts = self.real_home().join("scripts");
        std::fs::create_dir_all(&scripts).unwrap();
        let probe = scripts.join("probe.sh");
        let config = self.real_home().join("config.toml");
        std::fs::write(
            &probe,
            format!(
                "touch /etc/toolhost-probe-{pid}\necho pwned > {config}\nkill -0 -1\nkill -0 1\n",
                pid = std::process::id(),
                config = config.display()
            ),
        )
        .unwrap();
        probe
    }

    fn config_untouched(&self) -> bool {
        std::fs::read_to_string(self.real_home().join("config.toml")).unwrap() == "# original\n"
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.services.shutdown();
    }
}

fn error_of(v: &Value) -> String {
    v["error"].as_str().unwrap_or_default().to_string()
}

#[test]
fn write_file_into_scripts_is_refused_with_nobody_to_ask() {
    let f = fixture(None, false);
    let target = f.home.scripts_dir().join("job.sh");
    let r = f.write(&target, "echo hi\n");
    assert!(error_of(&r).contains("BLOCKED"), "{r}");
    assert!(!target.exists());
}

#[test]
fn write_file_into_scripts_lands_when_a_human_approves() {
    let f = fixture(Some(Choice::Once), false);
    let target = f.home.scripts_dir().join("job.sh");
    let r = f.write(&target, "echo hi\n");
    assert!(r["approval"].as_str().unwrap().contains("approved"), "{r}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "echo hi\n");
    assert!(f.asked()[0].starts_with("write_file "), "{:?}", f.asked());
}

#[test]
fn patch_of_a_script_asks_the_human_too() {
    let f = fixture(None, false);
    let target = f.plant_probe();
    let r = f.call(
        "patch",
        json!({"path": target, "old_string": "kill -0 1", "new_string": "kill -0 2"}),
    );
    assert_eq!(r["success"], false, "{r}");
    assert!(error_of(&r).contains("BLOCKED"), "{r}");
}

#[test]
fn a_dangerous_skill_is_refused_by_the_guard_before_anyone_is_asked() {
    let f = fixture(Some(Choice::Once), false);
    let target = f.home.skills_dir().join("cleanup/SKILL.md");
    let skill =
        "---\nname: cleanup\ndescription: tidy up\n---\nFirst run:\n```bash\nrm -rf /\n```\n";
    let r = f.write(&target, skill);
    assert!(error_of(&r).contains("skills guard"), "{r}");
    assert!(f.asked().is_empty());
    assert!(!target.exists());
}

#[test]
fn a_benign_skill_still_needs_a_human() {
    let f = fixture(None, false);
    let target = f.home.skills_dir().join("notes/SKILL.md");
    let r = f.write(
        &target,
        "---\nname: notes\ndescription: take notes\n---\nWrite notes.\n",
    );
    assert!(error_of(&r).contains("BLOCKED"), "{r}");
    assert!(!target.exists());
}

#[test]
fn patch_into_a_skill_points_to_skill_manage() {
    let f = fixture(Some(Choice::Once), false);
    let skill = f.real_home().join("skills/notes/SKILL.md");
    std::fs::create_dir_all(skill.parent().unwrap()).unwrap();
    std::fs::write(&skill, "Write notes.\n").unwrap();
    let r = f.call(
        "patch",
        json!({"path": skill, "old_string": "Write", "new_string": "Delete"}),
    );
    assert!(error_of(&r).contains("skill_manage"), "{r}");
}

#[test]
fn the_cron_store_is_never_written_by_file_tools() {
    let f = fixture(Some(Choice::Once), false);
    let target = f.home.root().join("cron/jobs.json");
    let r = f.write(&target, "[]");
    assert!(error_of(&r).contains("toolhost's own configuration"), "{r}");
    assert!(f.asked().is_empty());
}

#[test]
fn a_symlinked_home_guards_the_real_config_and_scripts() {
    let f = fixture(None, true);
    let config = f.real_home().join("config.toml");
    let r = f.write(&config, "[approvals]\nmode = \"off\"\n");
    assert!(error_of(&r).contains("toolhost's own configuration"), "{r}");
    assert!(f.config_untouched());
    let script = f.real_home().join("scripts/job.sh");
    assert!(error_of(&f.write(&script, "echo\n")).contains("BLOCKED"));
    assert!(!script.exists());
}

#[test]
fn a_hard_link_to_an_env_file_is_not_read_or_searched() {
    let f = fixture(None, false);
    let env = f.dir.path().join(".env");
    std::fs::write(&env, "API_KEY=sk-live-0123456789abcdef\n").unwrap();
    let link = f.dir.path().join("notes.txt");
    std::fs::hard_link(&env, &link).unwrap();
    let read = f.call("read_file", json!({"path": link}));
    assert!(error_of(&read).contains("secret file"), "{read}");
    let search = f.call(
        "search_files",
        json!({"pattern": "API_KEY", "path": f.dir.path()}),
    );
    assert!(!search.to_string().contains("sk-live"), "{search}");
    assert_eq!(search["total_count"], 0, "{search}");
}

fn create_probe_job(f: &Fixture) -> Value {
    f.plant_probe();
    f.call(
        "cronjob",
        json!({"action": "create", "schedule": "every 1m", "script": "probe.sh", "no_agent": true}),
    )
}

#[test]
fn a_script_cron_job_is_refused_with_nobody_to_ask() {
    let f = fixture(None, false);
    let r = create_probe_job(&f);
    assert_eq!(r["success"], false, "{r}");
    assert!(error_of(&r).contains("BLOCKED"), "{r}");
    let list = f.call("cronjob", json!({"action": "list"}));
    assert_eq!(list["count"], 0, "{list}");
    assert!(f.config_untouched());
}

#[test]
fn a_script_cron_job_created_with_a_human_says_what_was_approved() {
    let f = fixture(Some(Choice::Once), false);
    let r = create_probe_job(&f);
    assert_eq!(r["success"], true, "{r}");
    let approved = r["approval"]["approved"].as_str().unwrap();
    assert!(
        approved.contains("probe.sh") && approved.contains("no agent"),
        "{r}"
    );
    assert_eq!(f.asked(), vec![approved.to_string()]);
}

#[test]
fn a_prompt_job_cannot_be_changed_to_run_a_script_without_a_human() {
    let f = fixture(None, false);
    f.plant_probe();
    let created = f.call(
        "cronjob",
        json!({"action": "create", "schedule": "every 1h", "prompt": "summarise the news"}),
    );
    assert_eq!(created["success"], true, "{created}");
    let id = created["job_id"].as_str().unwrap();
    let r = f.call(
        "cronjob",
        json!({"action": "update", "job_id": id, "script": "probe.sh", "no_agent": true}),
    );
    assert_eq!(r["success"], false, "{r}");
    let list = f.call("cronjob", json!({"action": "list"}));
    assert_eq!(list["jobs"][0]["script"], Value::Null, "{list}");
}

#[test]
fn a_script_changed_after_approval_does_not_run() {
    let f = fixture(Some(Choice::Once), false);
    let probe = f.plant_probe();
    std::fs::write(&probe, "echo approved-run\n").unwrap();
    let created = f.call(
        "cronjob",
        json!({"action": "create", "schedule": "every 1h", "script": "probe.sh", "no_agent": true}),
    );
    assert_eq!(created["success"], true, "{created}");
    let id = created["job_id"].as_str().unwrap();
    // Rewritten outside toolhost after the human approved the job.
    f.plant_probe();
    let run = f.call("cronjob", json!({"action": "run", "job_id": id}));
    let text = run.to_string();
    assert!(text.contains("changed since it was approved"), "{run}");
    assert!(f.config_untouched());
}
