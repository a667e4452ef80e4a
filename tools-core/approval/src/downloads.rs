//! Download-then-run across commands: the files a task's commands downloaded
//! (`curl -o x.sh URL`, `wget URL`), remembered so that running one in a later command of
//! the same task (`sh x.sh`, `./x.sh`, `python x.py`, `. x.sh`) is flagged
//! `exec.run_downloaded`, as it is within one command (`exec.download_then_run`).
//!
//! The gate ([`super::ApprovalEngine`]) keeps one list per task (its terminal shares one
//! working directory), records what each command that was allowed to run downloaded, and
//! forgets a path a later command overwrote with other content. Paths are as the
//! analyser names them; a later command matches by the same path or the same file name,
//! since the working directory may have moved in between (a false alarm only asks).

use std::collections::HashMap;

/// Most paths remembered per task (the oldest are forgotten first).
const MAX_PER_TASK: usize = 256;
/// Most tasks remembered (past it, the whole memory starts again).
const MAX_TASKS: usize = 4096;

/// The files one command downloaded and the files it wrote with other content.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Downloads {
    /// Written by a network downloader.
    pub fetched: Vec<String>,
    /// Written with other content (no longer a download, if one was).
    pub replaced: Vec<String>,
}

impl Downloads {
    /// True when the command wrote no file the analyser could name.
    pub fn is_empty(&self) -> bool {
        self.fetched.is_empty() && self.replaced.is_empty()
    }
}

/// Per task: the downloaded paths still in place, as far as the analyser saw.
#[derive(Debug, Default)]
pub(crate) struct TaskDownloads {
    by_task: HashMap<String, Vec<String>>,
}

impl TaskDownloads {
    /// What earlier commands of `task` downloaded.
    pub(crate) fn earlier(&self, task: &str) -> &[String] {
        self.by_task.get(task).map_or(&[], Vec::as_slice)
    }

    /// Remember what a command of `task` that ran wrote.
    pub(crate) fn record(&mut self, task: &str, downloads: &Downloads) {
        if downloads.fetched.is_empty() && !self.by_task.contains_key(task) {
            return;
        }
        if !self.by_task.contains_key(task) && self.by_task.len() >= MAX_TASKS {
            self.by_task.clear();
        }
        let paths = self.by_task.entry(task.to_string()).or_default();
        paths.retain(|p| !downloads.replaced.contains(p) && !downloads.fetched.contains(p));
        paths.extend(downloads.fetched.iter().cloned());
        if paths.len() > MAX_PER_TASK {
            let excess = paths.len() - MAX_PER_TASK;
            paths.drain(..excess);
        }
    }

    /// Forget `task`.
    pub(crate) fn forget(&mut self, task: &str) {
        self.by_task.remove(task);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn downloads(fetched: &[&str], replaced: &[&str]) -> Downloads {
        Downloads {
            fetched: fetched.iter().map(|s| s.to_string()).collect(),
            replaced: replaced.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn tasks_are_kept_apart_and_overwrites_forget() {
        let mut memory = TaskDownloads::default();
        memory.record("t1", &downloads(&["x.sh", "/tmp/y.py"], &[]));
        assert_eq!(memory.earlier("t1"), ["x.sh", "/tmp/y.py"]);
        assert!(memory.earlier("t2").is_empty());
        memory.record("t1", &downloads(&[], &["x.sh"]));
        assert_eq!(memory.earlier("t1"), ["/tmp/y.py"]);
        memory.record("t1", &downloads(&["/tmp/y.py"], &[]));
        assert_eq!(memory.earlier("t1"), ["/tmp/y.py"], "no duplicates");
        memory.forget("t1");
        assert!(memory.earlier("t1").is_empty());
    }

    #[test]
    fn memory_is_bounded() {
        let mut memory = TaskDownloads::default();
        for i in 0..MAX_PER_TASK + 10 {
            memory.record("t", &downloads(&[&format!("f{i}")], &[]));
        }
        let kept = memory.earlier("t");
        assert_eq!(kept.len(), MAX_PER_TASK);
        assert_eq!(kept[0], "f10", "the oldest go first");
        for i in 0..MAX_TASKS + 1 {
            memory.record(&format!("task{i}"), &downloads(&["a"], &[]));
        }
        assert!(memory.by_task.len() <= MAX_TASKS);
    }
}
