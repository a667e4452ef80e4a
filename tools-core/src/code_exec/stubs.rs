//! The generated `toolhost_tools` Python module: one function per allowed tool, each
//! sending `{"tool","args","token"}` as a JSON line and returning the parsed result;
//! plus Hermes' helpers `json_parse`, `shell_quote` and `retry`. Unknown tools get a
//! generic `fn(**kwargs)` stub, so plugin and MCP tools can be allowed too.
//!
//! Two transports ([`Transport`]): on the host the line goes over the Unix socket named
//! by `TOOLHOST_RPC_SOCKET`; in a remote environment it is written as a request file
//! in the directory named by `TOOLHOST_RPC_DIR` and the answer read back from a
//! response file (the other end is [`super::relay`]).

/// (name, Python signature, docstring, arguments dict expression).
const STUBS: &[(&str, &str, &str, &str)] = &[
    (
        "web_search",
        "query: str, limit: int = 5",
        "Search the web. Returns dict with data.web list of {url, title, description}.",
        r#"{"query": query, "limit": limit}"#,
    ),
    (
        "web_extract",
        "urls: list, char_limit: int = None",
        "Extract content from URLs. Returns dict with results list of {url, title, content, error}.",
        r#"{"urls": urls, "char_limit": char_limit}"#,
    ),
    (
        "read_file",
        "path: str, offset: int = 1, limit: int = 500",
        "Read a file (1-indexed lines). Returns dict with \"content\" and \"total_lines\".",
        r#"{"path": path, "offset": offset, "limit": limit}"#,
    ),
    (
        "write_file",
        "path: str, content: str",
        "Write content to a file (always overwrites). Returns dict with status.",
        r#"{"path": path, "content": content}"#,
    ),
    (
        "search_files",
        "pattern: str, target: str = \"content\", path: str = \".\", file_glob: str = None, limit: int = 50, offset: int = 0, output_mode: str = \"content\", context: int = 0",
        "Search file contents (target=\"content\") or find files by name (target=\"files\"). Returns dict with \"matches\".",
        r#"{"pattern": pattern, "target": target, "path": path, "file_glob": file_glob, "limit": limit, "offset": offset, "output_mode": output_mode, "context": context}"#,
    ),
    (
        "patch",
        "path: str = None, old_string: str = None, new_string: str = None, replace_all: bool = False, mode: str = \"replace\", patch: str = None",
        "Targeted find-and-replace (mode=\"replace\") or V4A multi-file patches (mode=\"patch\"). Returns dict with status.",
        r#"{"path": path, "old_string": old_string, "new_string": new_string, "replace_all": replace_all, "mode": mode, "patch": patch}"#,
    ),
    (
        "terminal",
        "command: str, timeout: int = None, workdir: str = None",
        "Run a shell command (foreground only). Returns dict with \"output\" and \"exit_code\".",
        r#"{"command": command, "timeout": timeout, "workdir": workdir}"#,
    ),
];

/// One line of the tool's documentation in the `execute_code` description.
pub fn doc_line(name: &str) -> String {
    match STUBS.iter().find(|(n, ..)| *n == name) {
        Some((n, sig, doc, _)) => format!("  {n}({sig}) -> dict\n    {doc}"),
        None => {
            format!("  {name}(**kwargs) -> dict\n    Calls the {name} tool with keyword arguments.")
        }
    }
}

const COMMON: &str = r#""""toolhost tool stubs (generated for one execute_code run)."""
import json, os, shlex, socket, threading, time

_lock = threading.Lock()


def _decode(raw):
    result = json.loads(raw)
    if isinstance(result, str):
        try:
            return json.loads(result)
        except ValueError:
            return result
    return result


def json_parse(text: str):
    """json.loads with strict=False (tolerates control characters in strings)."""
    return json.loads(text, strict=False)


def shell_quote(s: str) -> str:
    """shlex.quote(): use when putting dynamic text into terminal() commands."""
    return shlex.quote(s)


def retry(fn, max_attempts=3, delay=2):
    """Call fn() up to max_attempts times with exponential backoff."""
    last = None
    for attempt in range(max_attempts):
        try:
            return fn()
        except Exception as exc:  # noqa: BLE001
            last = exc
            if attempt < max_attempts - 1:
                time.sleep(delay * (2 ** attempt))
    raise last

"#;

/// `_call` over the Unix socket. With `TOOLHOST_RPC_CPU` set, the calling thread holds
/// that CPU from sending a request to reading its answer (the host serves it there:
/// `colocate.rs`), and has its own mask back in between.
const SOCKET_CALL: &str = r#"
_sock = None
_ONE_CPU = _OWN_CPUS = None
if "TOOLHOST_RPC_CPU" in os.environ and hasattr(os, "sched_setaffinity"):
    try:
        _ONE_CPU = {int(os.environ["TOOLHOST_RPC_CPU"])}
        if not _ONE_CPU < os.sched_getaffinity(0):
            _ONE_CPU = None
    except (OSError, ValueError):
        _ONE_CPU = None


def _hold_cpu():
    global _OWN_CPUS
    if _ONE_CPU is not None:
        try:
            _OWN_CPUS = os.sched_getaffinity(0)
            if _ONE_CPU < _OWN_CPUS:
                os.sched_setaffinity(0, _ONE_CPU)
                return True
        except OSError:
            pass
    return False


def _release_cpu():
    try:
        os.sched_setaffinity(0, _OWN_CPUS)
    except OSError:
        pass


def _connect():
    global _sock
    if _sock is None:
        _sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        _sock.connect(os.environ["TOOLHOST_RPC_SOCKET"])
    return _sock


def _call(tool, args):
    args = {k: v for k, v in args.items() if v is not None}
    request = json.dumps({"tool": tool, "args": args, "token": os.environ.get("TOOLHOST_RPC_TOKEN", "")}) + "\n"
    with _lock:
        conn = _connect()
        held = _hold_cpu()
        try:
            conn.sendall(request.encode())
            buf = b""
            while not buf.endswith(b"\n"):
                chunk = conn.recv(65536)
                if not chunk:
                    raise RuntimeError("toolhost closed the tool channel")
                buf += chunk
        finally:
            if held:
                _release_cpu()
    return _decode(buf.decode())

"#;

/// `_call` through request and response files. A request is written to
/// `req_<pid>_<n>.tmp` and renamed (the relay never sees half a request); a response
/// is complete once it ends with its newline (the only one in it). The process id in
/// the name keeps a script's subprocesses, which may import the module too, apart.
const FILE_CALL: &str = r#"
_RPC_DIR = os.environ.get("TOOLHOST_RPC_DIR", "")
_seq = 0


def _call(tool, args):
    global _seq
    args = {k: v for k, v in args.items() if v is not None}
    with _lock:
        _seq += 1
        name = "%d_%d" % (os.getpid(), _seq)
    request = json.dumps({"tool": tool, "args": args, "token": _TOKEN, "id": name}) + "\n"
    req = os.path.join(_RPC_DIR, "req_" + name)
    res = os.path.join(_RPC_DIR, "res_" + name)
    with open(req + ".tmp", "w", encoding="utf-8") as f:
        f.write(request)
    os.rename(req + ".tmp", req)
    delay = 0.0005
    while True:
        try:
            with open(res, encoding="utf-8") as f:
                raw = f.read()
        except FileNotFoundError:
            raw = ""
        if raw.endswith("\n"):
            break
        if not os.path.isdir(_RPC_DIR):
            raise RuntimeError("toolhost closed the tool channel")
        time.sleep(delay)
        delay = min(delay * 2, 0.05)
    try:
        os.unlink(res)
    except OSError:
        pass
    return _decode(raw)

"#;

/// How the module reaches the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport<'a> {
    /// A Unix socket (`TOOLHOST_RPC_SOCKET`, token in `TOOLHOST_RPC_TOKEN`).
    Socket,
    /// Request and response files in `TOOLHOST_RPC_DIR`; the run's token is written
    /// into the module, which lives in a private (0700) directory.
    Files {
        /// The run's token.
        token: &'a str,
    },
}

/// Whether `name` can be a Python function name.
fn python_identifier(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The module's source for `tools` (sorted; names that are not Python identifiers,
/// e.g. with `-`, are skipped) over `transport`.
pub fn module_source(tools: &[String], transport: Transport<'_>) -> String {
    let mut source = COMMON.to_string();
    match transport {
        Transport::Socket => source.push_str(SOCKET_CALL),
        Transport::Files { token } => {
            // The token is hex: a plain Python string literal.
            source.push_str(&format!("\n_TOKEN = {token:?}\n"));
            source.push_str(FILE_CALL);
        }
    }
    for name in tools.iter().filter(|n| python_identifier(n)) {
        let stub = match STUBS.iter().find(|(n, ..)| n == name) {
            Some((_, sig, doc, args)) => {
                format!(
                    "\ndef {name}({sig}):\n    \"\"\"{doc}\"\"\"\n    return _call({name:?}, {args})\n\n"
                )
            }
            None => format!(
                "\ndef {name}(**kwargs):\n    \"\"\"Call the {name} tool.\"\"\"\n    return _call({name:?}, kwargs)\n\n"
            ),
        };
        source.push_str(&stub);
    }
    source
}
