//! The file tools' view of each task's execution environment: a
//! [`FileSystemProvider`] over the [`EnvironmentManager`].
//!
//! A task on the local backend gets the host file system ([`LocalFileSystem`]) rooted at
//! its terminal session's *live* working directory (a `cd` in the terminal moves the
//! file tools too). Every other backend gets an [`EnvironmentFileSystem`], whose
//! operations are the shell primitives of [`crate::environments::fs_ops`] run inside the task's
//! environment: with the docker backend, `read_file` reads the file in the container;
//! with ssh, on the remote host; with the sandbox, under the sandbox's restrictions.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::environments::fs_ops::EnvFileKind;
use crate::environments::{BackendKind, EnvironmentManager, TaskEnvironment};
use crate::files::{
    DirEntry, FileKind, FileMeta, FileSystem, FileSystemProvider, LocalFileSystem, WalkControl,
    WalkEntry, WalkOptions, WriteReport,
};

/// Hands each task the file system of its environment.
#[derive(Debug)]
pub struct EnvironmentFiles {
    manager: Arc<EnvironmentManager>,
}

impl EnvironmentFiles {
    /// A provider over `manager`'s environments.
    pub fn new(manager: &Arc<EnvironmentManager>) -> Self {
        EnvironmentFiles {
            manager: Arc::clone(manager),
        }
    }
}

impl FileSystemProvider for EnvironmentFiles {
    fn for_task(&self, task_id: &str) -> Arc<dyn FileSystem> {
        if self.manager.backend_for(task_id) == BackendKind::Local {
            let cwd = match self.manager.get(task_id) {
                Some(env) => env.cwd(),
                None => self.manager.initial_local_cwd(task_id),
            };
            return Arc::new(LocalFileSystem::new(cwd));
        }
        Arc::new(EnvironmentFileSystem {
            manager: Arc::clone(&self.manager),
            task: task_id.to_string(),
            env: OnceLock::new(),
            home: OnceLock::new(),
        })
    }
}

/// One task's files inside a non-local environment (created on first use).
#[derive(Debug)]
pub struct EnvironmentFileSystem {
    manager: Arc<EnvironmentManager>,
    task: String,
    env: OnceLock<Arc<TaskEnvironment>>,
    home: OnceLock<Option<PathBuf>>,
}

fn path_str(path: &Path) -> io::Result<&str> {
    path.to_str().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not valid UTF-8", path.display()),
        )
    })
}

fn kind(kind: EnvFileKind) -> FileKind {
    match kind {
        EnvFileKind::File => FileKind::File,
        EnvFileKind::Dir => FileKind::Dir,
        EnvFileKind::Other => FileKind::Other,
    }
}

impl EnvironmentFileSystem {
    fn env(&self) -> io::Result<&Arc<TaskEnvironment>> {
        if let Some(env) = self.env.get() {
            return Ok(env);
        }
        let env = self
            .manager
            .get_or_create(&self.task)
            .map_err(|e| io::Error::other(e.to_string()))?;
        Ok(self.env.get_or_init(|| env))
    }
}

impl FileSystem for EnvironmentFileSystem {
    fn kind(&self) -> &str {
        self.manager.backend_for(&self.task).name()
    }

    fn cwd(&self) -> PathBuf {
        match self.env() {
            Ok(env) => PathBuf::from(env.cwd()),
            Err(_) => PathBuf::from("/"),
        }
    }

    fn home_dir(&self) -> Option<PathBuf> {
        self.home
            .get_or_init(|| {
                self.env()
                    .ok()
                    .and_then(|env| env.home_dir())
                    .map(PathBuf::from)
            })
            .clone()
    }

    fn metadata(&self, path: &Path) -> io::Result<FileMeta> {
        let meta = self.env()?.stat(path_str(path)?)?;
        Ok(FileMeta {
            kind: kind(meta.kind),
            len: meta.len,
            modified: meta.modified,
        })
    }

    fn open(&self, path: &Path) -> io::Result<Box<dyn io::Read + Send>> {
        self.env()?.open_read(path_str(path)?)
    }

    fn read_prefix(&self, path: &Path, max: usize) -> io::Result<Vec<u8>> {
        self.env()?.read_prefix(path_str(path)?, max)
    }

    fn write_atomic(&self, path: &Path, contents: &[u8]) -> io::Result<WriteReport> {
        let dirs_created = self.env()?.write_atomic(path_str(path)?, contents)?;
        Ok(WriteReport { dirs_created })
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.env()?.remove_file(path_str(path)?)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.env()?.rename(path_str(from)?, path_str(to)?)
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        Ok(self
            .env()?
            .list_dir(path_str(path)?)?
            .into_iter()
            .map(|(name, k)| DirEntry {
                name,
                kind: kind(k),
            })
            .collect())
    }

    fn walk(
        &self,
        root: &Path,
        options: &WalkOptions,
        visit: &mut dyn FnMut(WalkEntry) -> WalkControl,
    ) -> io::Result<()> {
        let entries = self.env()?.walk_files(
            path_str(root)?,
            options.hidden,
            options.respect_ignore_files,
            options.max_depth,
        )?;
        for entry in entries {
            let control = visit(WalkEntry {
                path: PathBuf::from(entry.path),
                len: entry.len,
                modified: entry.modified,
            });
            if control == WalkControl::Stop {
                break;
            }
        }
        Ok(())
    }
}
