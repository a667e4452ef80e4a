//! File-system primitives inside a task's environment, for the file tools
//! (`read_file`, `write_file`, `patch`, `search_files`): metadata, streaming read,
//! atomic write, remove, rename, directory listing, tree walk. Each is one short POSIX
//! `sh` script (busybox-compatible) run through the backend, so they work the same in a
//! container, over ssh, in the sandbox or in a cloud sandbox. Failures come back as
//! `std::io::Error`s with the right kind (`NotFound`, `PermissionDenied`,
//! `IsADirectory`, ...).

use std::io::{self, Read};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::exec::{self, Ending};
use super::shell::quote_cd_target as q;
use super::{OutputCapture, SpawnRequest, StdinMode, TaskEnvironment};

/// Limit of one file-system script.
pub const FS_TIMEOUT: Duration = Duration::from_secs(120);

/// What a path is inside the environment (symlinks followed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnvFileKind {
    /// Regular file.
    File,
    /// Directory.
    Dir,
    /// Device, FIFO, socket, dangling link.
    Other,
}

/// Metadata of a path inside the environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvMeta {
    /// Kind.
    pub kind: EnvFileKind,
    /// Size in bytes.
    pub len: u64,
    /// Modification time.
    pub modified: Option<SystemTime>,
}

/// A regular file found by [`TaskEnvironment::walk_files`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvWalkEntry {
    /// Absolute path.
    pub path: String,
    /// Size in bytes.
    pub len: u64,
    /// Modification time.
    pub modified: Option<SystemTime>,
}

/// Preamble: map the usual failures of `$p` to exit codes 2/3/4.
fn check_readable(path: &str) -> String {
    format!(
        "p={}\n[ -e \"$p\" ] || {{ echo \"No such file or directory: $p\"; exit 2; }}\n\
         [ -d \"$p\" ] && {{ echo \"Is a directory: $p\"; exit 3; }}\n\
         [ -r \"$p\" ] || {{ echo \"Permission denied: $p\"; exit 4; }}\n",
        q(path)
    )
}

fn io_error(code: i32, output: &[u8]) -> io::Error {
    let message = super::shell_message(output, code);
    let kind = match code {
        2 => io::ErrorKind::NotFound,
        3 => io::ErrorKind::IsADirectory,
        4 => io::ErrorKind::PermissionDenied,
        5 => io::ErrorKind::NotADirectory,
        124 => io::ErrorKind::TimedOut,
        _ => io::ErrorKind::Other,
    };
    io::Error::new(kind, message)
}

fn time(secs: i64) -> Option<SystemTime> {
    u64::try_from(secs)
        .ok()
        .map(|s| UNIX_EPOCH + Duration::from_secs(s))
}

fn parse_meta(text: &str) -> Option<EnvMeta> {
    let mut parts = text.split_whitespace();
    let kind = match parts.next()? {
        "f" => EnvFileKind::File,
        "d" => EnvFileKind::Dir,
        _ => EnvFileKind::Other,
    };
    let len = parts.next()?.parse().ok()?;
    let modified = parts.next().and_then(|m| m.parse().ok()).and_then(time);
    Some(EnvMeta {
        kind,
        len,
        modified,
    })
}

/// Prints `f|d|o SIZE MTIME` for `$p`.
const STAT_LINE: &str = "if [ -d \"$p\" ]; then t=d; elif [ -f \"$p\" ]; then t=f; else t=o; fi\n\
     printf '%s %s %s\\n' \"$t\" \"$(stat -L -c %s \"$p\" 2>/dev/null || echo 0)\" \"$(stat -L -c %Y \"$p\" 2>/dev/null || echo -1)\"\n";

/// A `cat` whose output is read as a stream; errors surface at EOF through the exit code.
struct StreamingRead {
    child: Box<dyn super::RunningCommand>,
    output: Box<dyn Read + Send>,
    done: bool,
}

impl Read for StreamingRead {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.done {
            return Ok(0);
        }
        let n = self.output.read(buf)?;
        if n == 0 {
            self.done = true;
            let code = self.child.wait()?;
            if code != 0 {
                return Err(io::Error::other(format!(
                    "reading failed with exit code {code}"
                )));
            }
        }
        Ok(n)
    }
}

impl Drop for StreamingRead {
    fn drop(&mut self) {
        if !self.done {
            self.child.kill();
        }
    }
}

impl TaskEnvironment {
    fn fs_run(&self, script: &str, stdin: StdinMode) -> io::Result<(i32, Vec<u8>)> {
        self.touch();
        exec::run_collect(self.backend().as_ref(), script, stdin, FS_TIMEOUT)
            .map_err(|e| io::Error::new(io::ErrorKind::TimedOut, e.to_string()))
    }

    fn fs_ok(&self, script: &str) -> io::Result<Vec<u8>> {
        let (code, out) = self.fs_run(script, StdinMode::Null)?;
        if code == 0 {
            Ok(out)
        } else {
            Err(io_error(code, &out))
        }
    }

    /// The environment's home directory (`$HOME`).
    pub fn home_dir(&self) -> Option<String> {
        let out = self.fs_ok("printf '%s' \"$HOME\"").ok()?;
        let home = String::from_utf8_lossy(&out).trim().to_string();
        (!home.is_empty()).then_some(home)
    }

    /// Metadata of `path` (symlinks followed).
    pub fn stat(&self, path: &str) -> io::Result<EnvMeta> {
        let script = format!(
            "p={}\n[ -e \"$p\" ] || {{ echo \"No such file or directory: $p\"; exit 2; }}\n{STAT_LINE}",
            q(path)
        );
        let out = self.fs_ok(&script)?;
        parse_meta(&String::from_utf8_lossy(&out))
            .ok_or_else(|| io::Error::other(format!("unexpected stat output for {path}")))
    }

    /// Stream the file at `path`. Missing, directory and permission errors are reported
    /// before the first byte.
    pub fn open_read(&self, path: &str) -> io::Result<Box<dyn Read + Send>> {
        // Check first so the common errors have their proper kind.
        self.fs_ok(&format!("{}true", check_readable(path)))?;
        self.touch();
        let mut child = self
            .backend()
            .spawn(SpawnRequest {
                script: format!("exec cat -- {}", q(path)),
                ..SpawnRequest::default()
            })
            .map_err(|e| io::Error::other(e.to_string()))?;
        let output = child
            .take_output()
            .ok_or_else(|| io::Error::other("no output stream"))?;
        Ok(Box::new(StreamingRead {
            child,
            output,
            done: false,
        }))
    }

    /// The first `max` bytes of `path`.
    pub fn read_prefix(&self, path: &str, max: usize) -> io::Result<Vec<u8>> {
        let script = format!("{}head -c {max} -- \"$p\"", check_readable(path));
        let mut child = self
            .backend()
            .spawn(SpawnRequest {
                script,
                ..SpawnRequest::default()
            })
            .map_err(|e| io::Error::other(e.to_string()))?;
        let mut capture = OutputCapture::unbounded();
        match exec::wait_for(child.as_mut(), &mut capture, FS_TIMEOUT, None) {
            Ending::Exited(0) => Ok(capture.into_bytes()),
            Ending::Exited(code) => Err(io_error(code, &capture.into_bytes())),
            _ => Err(io::Error::new(io::ErrorKind::TimedOut, "read timed out")),
        }
    }

    /// Replace `path` atomically (temporary file in the same directory, then `mv`),
    /// creating parent directories and keeping an existing file's mode. Returns true when
    /// directories were created.
    pub fn write_atomic(&self, path: &str, data: &[u8]) -> io::Result<bool> {
        let prep = format!(
            "p={}; d=$(dirname -- \"$p\")\n[ -d \"$p\" ] && {{ echo \"Is a directory: $p\"; exit 3; }}\n\
             c=0; [ -d \"$d\" ] || {{ mkdir -p -- \"$d\" || exit 4; c=1; }}\n\
             cd -- \"$d\" && printf '%s %s\\n' \"$c\" \"$(pwd -P)\"",
            q(path)
        );
        let out = self.fs_ok(&prep)?;
        let text = String::from_utf8_lossy(&out);
        let (created, dir) = text
            .trim()
            .split_once(' ')
            .ok_or_else(|| io::Error::other("unexpected output while preparing the write"))?;
        let name = path.rsplit('/').next().unwrap_or(path);
        let tmp = format!(
            "{}/.{}.toolhost-{}",
            dir.trim_end_matches('/'),
            name.chars().take(60).collect::<String>(),
            super::random_hex(8)
        );
        self.backend()
            .write_file(&tmp, data, FS_TIMEOUT)
            .map_err(|e| io::Error::new(io::ErrorKind::PermissionDenied, e.to_string()))?;
        let finish = format!(
            "p={}; t={}\nm=$(stat -L -c %a \"$p\" 2>/dev/null) && chmod \"$m\" \"$t\"\n\
             mv -f -- \"$t\" \"$p\" || {{ rm -f -- \"$t\"; exit 4; }}",
            q(path),
            q(&tmp)
        );
        self.fs_ok(&finish)?;
        Ok(created == "1")
    }

    /// Delete the file at `path` (never a directory).
    pub fn remove_file(&self, path: &str) -> io::Result<()> {
        self.fs_ok(&format!(
            "p={}\n[ -e \"$p\" ] || [ -L \"$p\" ] || {{ echo \"No such file or directory: $p\"; exit 2; }}\n\
             [ -d \"$p\" ] && {{ echo \"Is a directory: $p\"; exit 3; }}\nrm -f -- \"$p\" || exit 4",
            q(path)
        ))
        .map(drop)
    }

    /// Rename `from` to `to`, creating `to`'s parent directories.
    pub fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        self.fs_ok(&format!(
            "a={}; b={}\n[ -e \"$a\" ] || {{ echo \"No such file or directory: $a\"; exit 2; }}\n\
             mkdir -p -- \"$(dirname -- \"$b\")\" && mv -f -- \"$a\" \"$b\" || exit 4",
            q(from),
            q(to)
        ))
        .map(drop)
    }

    /// Entries of the directory at `path`, sorted by name: `(name, kind)`.
    pub fn list_dir(&self, path: &str) -> io::Result<Vec<(String, EnvFileKind)>> {
        let out = self.fs_ok(&format!(
            "d={}\n[ -e \"$d\" ] || {{ echo \"No such file or directory: $d\"; exit 2; }}\n\
             [ -d \"$d\" ] || {{ echo \"Not a directory: $d\"; exit 5; }}\n\
             for f in \"$d\"/* \"$d\"/.[!.]* \"$d\"/..?*; do\n\
             [ -e \"$f\" ] || [ -L \"$f\" ] || continue\n\
             if [ -d \"$f\" ]; then t=d; elif [ -f \"$f\" ]; then t=f; else t=o; fi\n\
             printf '%s/%s\\0' \"$t\" \"${{f##*/}}\"\ndone",
            q(path)
        ))?;
        let mut entries: Vec<(String, EnvFileKind)> = out
            .split(|b| *b == 0)
            .filter(|e| e.len() > 2)
            .map(|e| {
                let kind = match e[0] {
                    b'd' => EnvFileKind::Dir,
                    b'f' => EnvFileKind::File,
                    _ => EnvFileKind::Other,
                };
                (String::from_utf8_lossy(&e[2..]).into_owned(), kind)
            })
            .collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(entries)
    }

    /// Regular files under `root`, sorted by path. Hidden entries are skipped unless
    /// `hidden`; `.gitignore`/`.ignore` are honoured when `rg` exists in the environment
    /// (`rg --files`), otherwise `find` is used without ignore files.
    pub fn walk_files(
        &self,
        root: &str,
        hidden: bool,
        respect_ignore_files: bool,
        max_depth: Option<usize>,
    ) -> io::Result<Vec<EnvWalkEntry>> {
        let depth = max_depth
            .map(|d| format!("--max-depth {}", d + 1))
            .unwrap_or_default();
        let find_depth = max_depth
            .map(|d| format!("-maxdepth {}", d + 1))
            .unwrap_or_default();
        let hidden_rg = if hidden { "--hidden" } else { "" };
        let ignore_rg = if respect_ignore_files {
            ""
        } else {
            "--no-ignore"
        };
        let hidden_find = if hidden {
            String::new()
        } else {
            "\\( -name '.*' ! -path \"$r\" -prune \\) -o".to_string()
        };
        let script = format!(
            "r={}\n[ -e \"$r\" ] || {{ echo \"No such file or directory: $r\"; exit 2; }}\n\
             if command -v rg >/dev/null 2>&1; then rg --files {hidden_rg} {ignore_rg} {depth} -0 -- \"$r\" 2>/dev/null\n\
             else find \"$r\" {find_depth} {hidden_find} -type f -print0 2>/dev/null; fi | \
             while IFS= read -r -d '' f 2>/dev/null || [ -n \"$f\" ]; do printf '%s %s %s\\0' \"$(stat -L -c %s \"$f\" 2>/dev/null || echo 0)\" \"$(stat -L -c %Y \"$f\" 2>/dev/null || echo -1)\" \"$f\"; f=; done",
            q(root)
        );
        // `read -d ''` is a bash/busybox extension; fall back to xargs where missing.
        let out = match self.fs_ok(&script) {
            Ok(out) => out,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(e),
            Err(_) => self.fs_ok(&format!(
                "r={}\nfind \"$r\" {find_depth} {hidden_find} -type f -exec stat -L -c '%s %Y %n' {{}} + 2>/dev/null | tr '\\n' '\\0'",
                q(root)
            ))?,
        };
        let mut entries: Vec<EnvWalkEntry> = out
            .split(|b| *b == 0)
            .filter(|e| !e.is_empty())
            .filter_map(|e| {
                let text = String::from_utf8_lossy(e);
                let mut parts = text.splitn(3, ' ');
                let len = parts.next()?.parse().ok()?;
                let modified = parts.next()?.parse().ok().and_then(time);
                Some(EnvWalkEntry {
                    path: parts.next()?.to_string(),
                    len,
                    modified,
                })
            })
            .collect();
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::local::LocalEnvironment;
    use std::sync::Arc;

    fn env() -> TaskEnvironment {
        TaskEnvironment::start(
            Arc::new(LocalEnvironment::new("/", Vec::new())),
            "fs",
            None,
            &[],
        )
        .unwrap()
    }

    #[test]
    fn primitives_through_the_shell() {
        let env = env();
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display().to_string();
        let file = format!("{d}/a/b/c.bin");
        assert!(env.write_atomic(&file, b"one\x00two").unwrap());
        assert!(!env.write_atomic(&file, b"three").unwrap());
        let mut text = String::new();
        env.open_read(&file)
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, "three");
        assert_eq!(env.read_prefix(&file, 2).unwrap(), b"th");
        let meta = env.stat(&file).unwrap();
        assert_eq!((meta.kind, meta.len), (EnvFileKind::File, 5));
        assert!(meta.modified.is_some());
        assert_eq!(env.stat(&format!("{d}/a")).unwrap().kind, EnvFileKind::Dir);
        assert_eq!(
            env.stat(&format!("{d}/nope")).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
        assert_eq!(
            env.open_read(&format!("{d}/a")).err().map(|e| e.kind()),
            Some(io::ErrorKind::IsADirectory)
        );
        std::fs::write(dir.path().join("a/.hidden"), "h").unwrap();
        std::fs::write(dir.path().join("a/x y.txt"), "x").unwrap();
        let listing = env.list_dir(&format!("{d}/a")).unwrap();
        assert_eq!(
            listing,
            vec![
                (".hidden".to_string(), EnvFileKind::File),
                ("b".to_string(), EnvFileKind::Dir),
                ("x y.txt".to_string(), EnvFileKind::File)
            ]
        );
        let walked: Vec<String> = env
            .walk_files(&d, false, false, None)
            .unwrap()
            .into_iter()
            .map(|e| e.path)
            .collect();
        assert_eq!(walked, vec![file.clone(), format!("{d}/a/x y.txt")]);
        env.rename(&file, &format!("{d}/moved/c.bin")).unwrap();
        env.remove_file(&format!("{d}/moved/c.bin")).unwrap();
        assert_eq!(
            env.remove_file(&format!("{d}/moved/c.bin"))
                .unwrap_err()
                .kind(),
            io::ErrorKind::NotFound
        );
    }
}
