//! [`InMemoryFileSystem`]: a file system held in a map — a compact reference
//! implementation of the [`FileSystem`] contract for tests and embedders (and proof that
//! the file tools touch files only through the trait).

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::SystemTime;

use super::{
    DirEntry, FileKind, FileMeta, FileSystem, WalkControl, WalkEntry, WalkOptions, WriteReport,
};

/// Files in memory; directories exist implicitly as the parents of files. Ignore files
/// are not interpreted (`respect_ignore_files` has no effect); hidden entries are.
#[derive(Debug)]
pub struct InMemoryFileSystem {
    cwd: PathBuf,
    home: Option<PathBuf>,
    files: Mutex<BTreeMap<PathBuf, (Vec<u8>, SystemTime)>>,
}

impl InMemoryFileSystem {
    /// An empty file system whose working directory is `cwd`.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        InMemoryFileSystem {
            cwd: cwd.into(),
            home: None,
            files: Mutex::new(BTreeMap::new()),
        }
    }

    /// Set the directory `~` expands to.
    pub fn with_home(mut self, home: impl Into<PathBuf>) -> Self {
        self.home = Some(home.into());
        self
    }

    /// Add or replace a file (absolute path).
    pub fn insert(&self, path: impl Into<PathBuf>, contents: impl Into<Vec<u8>>) {
        self.map()
            .insert(path.into(), (contents.into(), SystemTime::now()));
    }

    /// A file's bytes.
    pub fn get(&self, path: &Path) -> Option<Vec<u8>> {
        self.map().get(path).map(|(bytes, _)| bytes.clone())
    }

    fn map(&self) -> std::sync::MutexGuard<'_, BTreeMap<PathBuf, (Vec<u8>, SystemTime)>> {
        self.files.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn is_dir(&self, path: &Path) -> bool {
        self.map().keys().any(|p| p != path && p.starts_with(path))
    }
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("{}: not found", path.display()),
    )
}

impl FileSystem for InMemoryFileSystem {
    fn kind(&self) -> &str {
        "memory"
    }

    fn cwd(&self) -> PathBuf {
        self.cwd.clone()
    }

    fn home_dir(&self) -> Option<PathBuf> {
        self.home.clone()
    }

    fn metadata(&self, path: &Path) -> io::Result<FileMeta> {
        if let Some((bytes, modified)) = self.map().get(path) {
            return Ok(FileMeta {
                kind: FileKind::File,
                len: bytes.len() as u64,
                modified: Some(*modified),
            });
        }
        if self.is_dir(path) {
            return Ok(FileMeta {
                kind: FileKind::Dir,
                len: 0,
                modified: None,
            });
        }
        Err(not_found(path))
    }

    fn open(&self, path: &Path) -> io::Result<Box<dyn io::Read + Send>> {
        let bytes = self.get(path).ok_or_else(|| not_found(path))?;
        Ok(Box::new(io::Cursor::new(bytes)))
    }

    fn write_atomic(&self, path: &Path, contents: &[u8]) -> io::Result<WriteReport> {
        if self.is_dir(path) {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "is a directory",
            ));
        }
        let dirs_created = path
            .parent()
            .is_some_and(|parent| !self.is_dir(parent) && parent != Path::new("/"));
        self.insert(path, contents);
        Ok(WriteReport { dirs_created })
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.map()
            .remove(path)
            .map(|_| ())
            .ok_or_else(|| not_found(path))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut map = self.map();
        let entry = map.remove(from).ok_or_else(|| not_found(from))?;
        map.insert(to.to_path_buf(), entry);
        Ok(())
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        if !self.is_dir(path) {
            return Err(not_found(path));
        }
        let mut entries: BTreeMap<String, FileKind> = BTreeMap::new();
        for file in self.map().keys() {
            let Ok(rest) = file.strip_prefix(path) else {
                continue;
            };
            let mut parts = rest.components();
            if let Some(first) = parts.next() {
                let kind = if parts.next().is_some() {
                    FileKind::Dir
                } else {
                    FileKind::File
                };
                entries.insert(first.as_os_str().to_string_lossy().into_owned(), kind);
            }
        }
        Ok(entries
            .into_iter()
            .map(|(name, kind)| DirEntry { name, kind })
            .collect())
    }

    fn walk(
        &self,
        root: &Path,
        options: &WalkOptions,
        visit: &mut dyn FnMut(WalkEntry) -> WalkControl,
    ) -> io::Result<()> {
        self.metadata(root)?;
        let files: Vec<(PathBuf, u64, SystemTime)> = self
            .map()
            .iter()
            .filter(|(p, _)| p.starts_with(root))
            .map(|(p, (bytes, t))| (p.clone(), bytes.len() as u64, *t))
            .collect();
        for (path, len, modified) in files {
            let rest = path.strip_prefix(root).unwrap_or(&path);
            let depth = rest.components().count();
            let hidden = rest
                .components()
                .any(|c| c.as_os_str().to_string_lossy().starts_with('.'));
            if (hidden && !options.hidden) || options.max_depth.is_some_and(|d| depth > d) {
                continue;
            }
            let entry = WalkEntry {
                path,
                len,
                modified: Some(modified),
            };
            if visit(entry) == WalkControl::Stop {
                break;
            }
        }
        Ok(())
    }
}
