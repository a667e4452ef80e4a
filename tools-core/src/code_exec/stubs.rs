//! The generated `toolhost_tools` Python module: one function per allowed tool, each
//! sending `{"tool","args","token"}` as a JSON line over the Unix socket named by
//! `TOOLHOST_RPC_SOCKET` and returning the parsed result; plus Hermes' helpers
//! `json_parse`, `shell_quote` and `retry`. Unknown tools get a generic
//! `fn(**kwargs)` stub, so plugin and MCP tools can be allowed too.

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

const HEADER: &str = r#""""toolhost tool stubs (generated for one execute_code run)."""
import json, os, shlex, socket, threading, time

_sock = None
_lock = threading.Lock()


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
        conn.sendall(request.encode())
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = conn.recv(65536)
            if not chunk:
                raise RuntimeError("toolhost closed the tool channel")
            buf += chunk
    result = json.loads(buf.decode())
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

/// Whether `name` can be a Python function name.
fn python_identifier(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The module's source for `tools` (sorted; names that are not Python identifiers,
/// e.g. with `-`, are skipped).
pub fn module_source(tools: &[String]) -> String {
    let mut source = HEADER.to_string();
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
