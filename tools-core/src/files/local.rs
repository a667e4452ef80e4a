//! [`LocalFileSystem`]: the host's file system, through `std::fs` and the `ignore` crate
//! (ripgrep's directory walker, so `.gitignore` rules match `rg`'s exactly).
//!
//! Writes, removals and renames go through [`super::local_write`], which follows no
//! symlink (the tools check and then write the canonical path, see
//! [`FileSystem::canonicalize`]); reads open the file non-blocking and refuse anything
//! that is not a regular file on the handle itself, so a FIFO or device swapped in
//! after a check cannot hang the call.

use std::io;
use std::path::{Path, PathBuf};

use super::{
    ContentHash, DirEntry, FileKind, FileMeta, FileSystem, OpenedFile, WalkControl, WalkEntry,
    WalkOptions, WriteReport, normalize_lexically,
};

/// The host's file system, seen from one working directory.
#[derive(Clone, Debug)]
pub struct LocalFileSystem {
    cwd: PathBuf,
    home: Option<PathBuf>,
}

impl LocalFileSystem {
    /// A view rooted at `cwd` (should be absolute); `~` is the user's home directory.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        LocalFileSystem {
            cwd: cwd.into(),
            home: dirs::home_dir(),
        }
    }

    /// The same view with `~` meaning `home` (tests, embedders serving another user).
    #[must_use]
    pub fn with_home(mut self, home: impl Into<PathBuf>) -> Self {
        self.home = Some(home.into());
        self
    }
}

fn kind_of(file_type: std::fs::FileType) -> FileKind {
    if file_type.is_file() {
        FileKind::File
    } else if file_type.is_dir() {
        FileKind::Dir
    } else {
        FileKind::Other
    }
}

fn meta_of(meta: &std::fs::Metadata) -> FileMeta {
    FileMeta {
        kind: kind_of(meta.file_type()),
        len: meta.len(),
        modified: meta.modified().ok(),
    }
}

/// The process's umask, read without changing it (Linux `/proc/self/status`); the
/// common `022` when unknown.
#[cfg(unix)]
fn process_umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o022)
}

/// `path` with symlinks resolved on the host: the path itself if it exists, else its
/// nearest existing ancestor plus the remaining components; `None` when not even `/`
/// resolves.
pub fn canonical_local(path: &Path) -> Option<PathBuf> {
    let mut missing = Vec::new();
    let mut current = path;
    loop {
        if let Ok(real) = std::fs::canonicalize(current) {
            let mut out = real;
            for part in missing.iter().rev() {
                out.push(part);
            }
            return Some(normalize_lexically(&out));
        }
        missing.push(current.file_name()?.to_os_string());
        current = current.parent()?;
    }
}

/// Open a regular file for reading without blocking: `O_NONBLOCK` (a FIFO without a
/// writer would block the open itself) and the type checked on the opened handle.
/// Files on the kernel's pseudo file systems keep the non-blocking mode, so a read that
/// would wait (`/proc/kmsg`, trace pipes) fails instead of hanging.
fn open_regular(path: &Path) -> io::Result<std::fs::File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags((rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY).bits() as i32)
            .open(path)?;
        let meta = file.metadata()?;
        if !meta.file_type().is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is a device, FIFO or socket, not a regular file",
                    path.display()
                ),
            ));
        }
        Ok(file)
    }
    #[cfg(not(unix))]
    std::fs::File::open(path)
}

/// The path the kernel has for an open file (Linux `/proc/self/fd`); `None` elsewhere
/// or when `/proc` is not mounted.
fn handle_path(file: &std::fs::File) -> Option<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let link = format!("/proc/self/fd/{}", file.as_raw_fd());
        std::fs::read_link(link).ok().filter(|p| p.is_absolute())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        None
    }
}

/// A write through [`super::local_write`] (Unix) or [`crate::atomic_file`] elsewhere.
fn write_local(
    path: &Path,
    contents: &[u8],
    expected: Option<&ContentHash>,
) -> io::Result<WriteReport> {
    #[cfg(unix)]
    {
        // A new file gets what any other program would give it (0666 minus umask).
        let mode = 0o666 & !process_umask();
        super::local_write::write_beneath(path, contents, expected, mode)
    }
    #[cfg(not(unix))]
    {
        if let Some(expected) = expected {
            let current = std::fs::read(path).ok().map(|b| ContentHash::of(&b));
            if current.as_ref() != Some(expected) {
                return Err(super::file_changed(path));
            }
        }
        let dirs_created = path.parent().is_some_and(|parent| {
            !parent.as_os_str().is_empty() && std::fs::metadata(parent).is_err()
        });
        crate::atomic_file::write_atomic(path, contents)?;
        Ok(WriteReport { dirs_created })
    }
}

impl FileSystem for LocalFileSystem {
    fn kind(&self) -> &str {
        "local"
    }

    fn cwd(&self) -> PathBuf {
        self.cwd.clone()
    }

    fn home_dir(&self) -> Option<PathBuf> {
        self.home.clone()
    }

    fn metadata(&self, path: &Path) -> io::Result<FileMeta> {
        std::fs::metadata(path).map(|m| meta_of(&m))
    }

    fn open(&self, path: &Path) -> io::Result<Box<dyn io::Read + Send>> {
        Ok(Box::new(open_regular(path)?))
    }

    fn open_verified(&self, path: &Path) -> io::Result<OpenedFile> {
        let file = open_regular(path)?;
        let real_path = handle_path(&file)
            .or_else(|| canonical_local(path))
            .unwrap_or_else(|| path.to_path_buf());
        Ok(OpenedFile {
            reader: Box::new(file),
            real_path,
        })
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let mut file = open_regular(path)?;
        let mut bytes = Vec::new();
        io::Read::read_to_end(&mut file, &mut bytes)?;
        Ok(bytes)
    }

    fn write_atomic(&self, path: &Path, contents: &[u8]) -> io::Result<WriteReport> {
        write_local(path, contents, None)
    }

    fn write_atomic_if_unchanged(
        &self,
        path: &Path,
        contents: &[u8],
        expected: &ContentHash,
    ) -> io::Result<WriteReport> {
        write_local(path, contents, Some(expected))
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        #[cfg(unix)]
        return super::local_write::remove_beneath(path);
        #[cfg(not(unix))]
        std::fs::remove_file(path)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        #[cfg(unix)]
        return super::local_write::rename_beneath(from, to);
        #[cfg(not(unix))]
        {
            if let Some(parent) = to.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::rename(from, to)
        }
    }

    fn canonicalize(&self, path: &Path) -> PathBuf {
        canonical_local(path).unwrap_or_else(|| path.to_path_buf())
    }

    #[cfg(unix)]
    fn link_count(&self, path: &Path) -> Option<u64> {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(path).ok()?;
        meta.is_file().then(|| meta.nlink())
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        let mut entries = Vec::new();
        for entry in std::fs::read_dir(path)? {
            let entry = entry?;
            let kind = std::fs::metadata(entry.path())
                .map(|m| kind_of(m.file_type()))
                .unwrap_or(FileKind::Other);
            entries.push(DirEntry {
                name: entry.file_name().to_string_lossy().into_owned(),
                kind,
            });
        }
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(entries)
    }

    fn walk(
        &self,
        root: &Path,
        options: &WalkOptions,
        visit: &mut dyn FnMut(WalkEntry) -> WalkControl,
    ) -> io::Result<()> {
        // Fail on a missing root instead of yielding one error entry.
        std::fs::metadata(root)?;
        let ignore_files = options.respect_ignore_files;
        let walker = ignore::WalkBuilder::new(root)
            .hidden(!options.hidden)
            .ignore(ignore_files)
            .git_ignore(ignore_files)
            .git_exclude(ignore_files)
            .git_global(ignore_files)
            .parents(ignore_files)
            .follow_links(false)
            .max_depth(options.max_depth)
            .sort_by_file_name(|a, b| a.cmp(b))
            .build();
        for entry in walker {
            let entry = match entry {
                Ok(entry) => entry,
                Err(err) => {
                    tracing::debug!(%err, "walk: skipping unreadable entry");
                    continue;
                }
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            let found = WalkEntry {
                len: meta.len(),
                modified: meta.modified().ok(),
                path: entry.into_path(),
            };
            if visit(found) == WalkControl::Stop {
                break;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk_names(fs: &LocalFileSystem, root: &Path, options: &WalkOptions) -> Vec<String> {
        let mut names = Vec::new();
        fs.walk(root, options, &mut |e| {
            names.push(
                e.path
                    .strip_prefix(root)
                    .unwrap_or(&e.path)
                    .display()
                    .to_string(),
            );
            WalkControl::Continue
        })
        .unwrap();
        names
    }

    #[test]
    fn walk_skips_hidden_and_gitignored_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join("target")).unwrap();
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        std::fs::write(root.join("src/b.rs"), "b").unwrap();
        std::fs::write(root.join("a.txt"), "a").unwrap();
        std::fs::write(root.join(".hidden"), "h").unwrap();
        std::fs::write(root.join("target/out.o"), "o").unwrap();
        let fs = LocalFileSystem::new(root);
        assert_eq!(
            walk_names(&fs, root, &WalkOptions::default()),
            vec!["a.txt", "src/b.rs"]
        );
        let all = WalkOptions {
            hidden: true,
            respect_ignore_files: false,
            max_depth: None,
        };
        let names = walk_names(&fs, root, &all);
        assert!(names.contains(&"target/out.o".to_string()));
        assert!(names.contains(&".hidden".to_string()));
    }

    #[test]
    fn walk_stops_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..5 {
            std::fs::write(dir.path().join(format!("f{i}")), "x").unwrap();
        }
        let fs = LocalFileSystem::new(dir.path());
        let mut seen = 0;
        fs.walk(dir.path(), &WalkOptions::default(), &mut |_| {
            seen += 1;
            if seen == 2 {
                WalkControl::Stop
            } else {
                WalkControl::Continue
            }
        })
        .unwrap();
        assert_eq!(seen, 2);
    }

    #[test]
    fn walk_of_missing_root_is_not_found() {
        let fs = LocalFileSystem::new("/");
        let err = fs
            .walk(
                Path::new("/definitely/not/here"),
                &WalkOptions::default(),
                &mut |_| WalkControl::Continue,
            )
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn write_atomic_reports_created_dirs() {
        let dir = tempfile::tempdir().unwrap();
        let fs = LocalFileSystem::new(dir.path());
        let report = fs
            .write_atomic(&dir.path().join("x/y/z.txt"), b"hi")
            .unwrap();
        assert!(report.dirs_created);
        let report = fs
            .write_atomic(&dir.path().join("x/y/z.txt"), b"ho")
            .unwrap();
        assert!(!report.dirs_created);
        assert_eq!(std::fs::read(dir.path().join("x/y/z.txt")).unwrap(), b"ho");
    }

    #[cfg(unix)]
    #[test]
    fn new_files_get_umask_permissions_not_private_ones() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let fs = LocalFileSystem::new(dir.path());
        let path = dir.path().join("new.sh");
        fs.write_atomic(&path, b"echo").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o666 & !process_umask());
        // An existing file keeps its own mode.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700)).unwrap();
        fs.write_atomic(&path, b"echo 2").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }

    #[cfg(unix)]
    #[test]
    fn write_atomic_through_symlink_keeps_the_link() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.txt");
        let link = dir.path().join("link.txt");
        std::fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let fs = LocalFileSystem::new(dir.path());
        fs.write_atomic(&fs.canonicalize(&link), b"new").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
    }

    #[test]
    fn list_dir_is_sorted_with_kinds() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b"), "").unwrap();
        std::fs::create_dir(dir.path().join("a")).unwrap();
        let fs = LocalFileSystem::new(dir.path());
        let entries = fs.list_dir(dir.path()).unwrap();
        assert_eq!(
            entries,
            vec![
                DirEntry {
                    name: "a".into(),
                    kind: FileKind::Dir
                },
                DirEntry {
                    name: "b".into(),
                    kind: FileKind::File
                },
            ]
        );
    }
}
