"""toolhost's Python plugin host: runs one Hermes Agent plugin, unchanged, in this process.

toolhost starts this file (``python -c <this source> <spec>``) once per Python plugin. It
imports the plugin the way Hermes does -- a directory with ``plugin.yaml`` and
``__init__.py`` imported as ``hermes_plugins.<slug>``, or an entry point of the
``hermes_agent.plugins`` group -- and calls its ``register(ctx)`` with a ``ctx`` that
implements the part of Hermes' ``PluginContext`` that matters to tools. It then answers
the host over the same framed protocol as a native plugin host (a 4-byte little-endian
length, then JSON): the first frame, unasked, is the declaration (or the load error);
after that one response per request (``call``, ``check``, ``hook``), in order. While
serving a request the plugin may call ``ctx.dispatch_tool``; that sends a ``callback``
frame with the request's id and waits for the host's answer.

Only the standard library is used. What a plugin registers that toolhost cannot run
(slash commands, LLM hooks, providers, ...) is recorded as "unsupported: ..." and sent
with the declaration, never raised. See docs/python-plugins.md.
"""

import asyncio
import copy
import importlib
import importlib.metadata
import importlib.util
import inspect
import json
import logging
import os
import signal
import struct
import sys
import traceback
import types

# `python -c` puts the working directory first on sys.path: a file there must not
# shadow the modules a plugin imports.
if sys.path and sys.path[0] in ("", "."):
    sys.path.pop(0)

ENTRY_POINTS_GROUP = "hermes_agent.plugins"
NS_PARENT = "hermes_plugins"
SHIM_VERSION = "hermes-shim/1"
OBSERVER_SCHEMA_VERSION = "hermes.observer.v1"
MAX_FRAME = 256 * 1024 * 1024

# Hook names toolhost can call, and the Hermes hooks it has no event for.
SUPPORTED_HOOKS = (
    "pre_tool_call",
    "post_tool_call",
    "transform_tool_result",
    "transform_terminal_output",
    "pre_approval_request",
    "post_approval_response",
)
SUPPORTED_MIDDLEWARE = ("tool_request",)
# Hooks run once when the host shuts the plugin down (Hermes' CLI fires
# on_session_finalize at exit); then the interpreter exits normally, running atexit.
SHUTDOWN_HOOKS = ("on_session_finalize",)

log = logging.getLogger("toolhost.python_plugin")


class PluginToolOverrideError(PermissionError):
    """Raised by register_tool(override=True) when the operator did not allow it."""


class HostError(Exception):
    """The host answered a callback with an error."""


# --------------------------------------------------------------------------- channel


class Channel:
    """The framed pipe to the host, moved off fds 0 and 1."""

    def __init__(self):
        self.inp = os.dup(0)
        self.out = os.dup(1)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        # Whatever the plugin prints goes to stderr, never into a frame.
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        sys.stdin = open(os.devnull)

    def _read_exact(self, n):
        chunks = []
        while n > 0:
            chunk = os.read(self.inp, n)
            if not chunk:
                return None
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def read(self):
        head = self._read_exact(4)
        if head is None:
            return None
        (length,) = struct.unpack("<I", head)
        if length > MAX_FRAME:
            raise ValueError("frame of %d bytes exceeds the limit" % length)
        body = self._read_exact(length)
        if body is None:
            return None
        return json.loads(body)

    def write(self, value):
        body = json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")
        data = struct.pack("<I", len(body)) + body
        view = memoryview(data)
        while view:
            written = os.write(self.out, view)
            view = view[written:]


# --------------------------------------------------------------------------- context


class Manifest(types.SimpleNamespace):
    """What Hermes' PluginManifest holds that plugins read."""


class PluginContext:
    """Hermes' ``ctx``: what a plugin's ``register(ctx)`` may call."""

    def __init__(self, plugin):
        self._plugin = plugin
        self.manifest = plugin.manifest

    @property
    def profile_name(self):
        return self._plugin.spec.get("profile_name") or "default"

    @property
    def llm(self):
        self._plugin.unsupported("ctx.llm (toolhost has no host-owned LLM facade for plugins)")
        raise AttributeError("ctx.llm is not available under toolhost")

    def register_tool(
        self,
        name,
        toolset,
        schema,
        handler,
        check_fn=None,
        requires_env=None,
        is_async=False,
        description="",
        emoji="",
        override=False,
    ):
        plugin = self._plugin
        if override and not plugin.spec.get("allow_tool_override", False):
            plugin_id = self.manifest.key or self.manifest.name
            raise PluginToolOverrideError(
                "Plugin %r cannot override built-in tool %r. Allow it with "
                "plugins.python.allow_tool_override = [%r] in toolhost's config.toml."
                % (self.manifest.name, name, plugin_id)
            )
        plugin.add_tool(
            Tool(name, toolset, schema, handler, check_fn, requires_env, is_async,
                 description, emoji, override)
        )

    def register_hook(self, hook_name, callback):
        if hook_name not in SUPPORTED_HOOKS and hook_name not in SHUTDOWN_HOOKS:
            self._plugin.unsupported("hook %s (toolhost has no such event)" % hook_name)
        self._plugin.hooks.setdefault(hook_name, []).append(callback)

    def register_middleware(self, kind, callback):
        if kind not in SUPPORTED_MIDDLEWARE:
            self._plugin.unsupported("middleware %s" % kind)
        self._plugin.middleware.setdefault(kind, []).append(callback)

    def register_skill(self, name, path, description=""):
        if ":" in name:
            raise ValueError("Skill name '%s' must not contain ':'" % name)
        if not name or not all(c.isalnum() or c in "_-" for c in name):
            raise ValueError("Invalid skill name '%s'. Must match [a-zA-Z0-9_-]+." % name)
        if not os.path.exists(str(path)):
            raise FileNotFoundError("SKILL.md not found at %s" % path)
        self._plugin.skills.append(
            {"name": name, "path": str(path), "description": description}
        )
        self._plugin.unsupported("register_skill(%s) (plugin skills are not served yet)" % name)

    def dispatch_tool(self, tool_name, args, **kwargs):
        return self._plugin.dispatch_tool(tool_name, args, kwargs)

    def inject_message(self, content, role="user"):
        self._plugin.unsupported("inject_message")
        return False

    def __getattr__(self, attr):
        # register_command, register_cli_command, register_*_provider, register_platform,
        # ...: recorded, never a crash.
        if attr.startswith("register_"):
            plugin = self._plugin

            def unsupported(*args, **kwargs):
                what = args[0] if args and isinstance(args[0], str) else kwargs.get("name", "")
                plugin.unsupported("%s(%s)" % (attr, what) if what else attr)
                return None

            return unsupported
        raise AttributeError(attr)


class Tool:
    """One registered tool."""

    def __init__(self, name, toolset, schema, handler, check_fn, requires_env, is_async,
                 description, emoji, override):
        self.name = str(name)
        self.toolset = str(toolset or "")
        self.schema = schema if isinstance(schema, dict) else {}
        self.handler = handler
        self.check_fn = check_fn
        self.requires_env = requires_env or []
        self.is_async = bool(is_async)
        self.description = description or self.schema.get("description", "") or ""
        self.emoji = emoji or ""
        self.override = bool(override)

    def declaration(self):
        parameters = self.schema.get("parameters")
        if not isinstance(parameters, dict):
            parameters = {"type": "object", "properties": {}}
        env = []
        for item in self.requires_env:
            if isinstance(item, dict):
                item = item.get("name") or item.get("key") or ""
            if item:
                env.append(str(item))
        return {
            "name": self.name,
            "toolset": self.toolset,
            "description": str(self.description),
            "parameters": parameters,
            "requires_env": env,
            "emoji": str(self.emoji),
            "parallel_safe": False,
            "has_check": self.check_fn is not None,
        }


# --------------------------------------------------------------------------- plugin


class Plugin:
    """The plugin being served: what it registered, and how to run it."""

    def __init__(self, spec, channel):
        self.spec = spec
        self.channel = channel
        self.manifest = Manifest(
            name=spec.get("name", ""),
            key=spec.get("key") or spec.get("name", ""),
            version=spec.get("version", ""),
            description=spec.get("description", ""),
            source=spec.get("source", "user"),
            path=spec.get("path", ""),
            kind="standalone",
            requires_env=[],
            provides_tools=[],
            provides_hooks=[],
        )
        self.tools = []
        self.hooks = {}
        self.middleware = {}
        self.skills = []
        self._unsupported = []
        self.current_id = None
        self._loop = None

    def unsupported(self, what):
        if what not in self._unsupported:
            self._unsupported.append(what)

    def add_tool(self, tool):
        # Re-registering a name replaces it (Hermes: same name, same toolset).
        self.tools = [t for t in self.tools if t.name != tool.name]
        self.tools.append(tool)

    # -- loading ---------------------------------------------------------------

    def load(self):
        if self.spec.get("kind") == "entrypoint":
            target = self._load_entry_point()
        else:
            target = self._load_directory()
        register = getattr(target, "register", None)
        if register is None and callable(target) and not isinstance(target, types.ModuleType):
            # An entry point naming the function itself (`pkg.mod:register`).
            register = target
        if register is None:
            raise LoadFailure("no register() function")
        register(PluginContext(self))

    def _load_directory(self):
        plugin_dir = self.spec["path"]
        init_file = os.path.join(plugin_dir, "__init__.py")
        if not os.path.exists(init_file):
            raise LoadFailure("No __init__.py in %s" % plugin_dir)
        if NS_PARENT not in sys.modules:
            parent = types.ModuleType(NS_PARENT)
            parent.__path__ = []
            parent.__package__ = NS_PARENT
            sys.modules[NS_PARENT] = parent
        slug = self.manifest.key.replace("/", "__").replace("-", "_")
        module_name = "%s.%s" % (NS_PARENT, slug)
        spec = importlib.util.spec_from_file_location(
            module_name, init_file, submodule_search_locations=[plugin_dir]
        )
        if spec is None or spec.loader is None:
            raise LoadFailure("Cannot create module spec for %s" % init_file)
        module = importlib.util.module_from_spec(spec)
        module.__package__ = module_name
        module.__path__ = [plugin_dir]
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
        return module

    def _load_entry_point(self):
        for ep in entry_points():
            if ep.name == self.spec.get("entry_point"):
                return ep.load()
        raise LoadFailure(
            "Entry point '%s' not found in group '%s'"
            % (self.spec.get("entry_point"), ENTRY_POINTS_GROUP)
        )

    def declaration(self):
        hooks = [h for h in SUPPORTED_HOOKS if self.hooks.get(h)]
        if self.middleware.get("tool_request") and "pre_tool_call" not in hooks:
            hooks.insert(0, "pre_tool_call")
        return {
            "sdk_version": SHIM_VERSION,
            "tools": [t.declaration() for t in self.tools],
            "hooks": hooks,
            "python": {
                "unsupported": self._unsupported,
                "overrides": [t.name for t in self.tools if t.override],
                "skills": self.skills,
                "python_version": "%d.%d.%d" % sys.version_info[:3],
                "interpreter": sys.executable,
            },
        }

    # -- running ---------------------------------------------------------------

    def run_coroutine(self, value):
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(value)

    def call(self, index, args_text, context_text):
        tool = self.tools[index]
        args = json.loads(args_text) if args_text else {}
        context = json.loads(context_text) if context_text else {}
        kwargs = {
            "task_id": context.get("task_id", ""),
            "session_id": context.get("session_id", ""),
            "user_task": context.get("user_task"),
        }
        try:
            result = tool.handler(args, **kwargs)
            if tool.is_async or inspect.isawaitable(result):
                result = self.run_coroutine(result)
        except Exception as exc:  # Hermes: the error becomes the result.
            log.error("tool %s failed:\n%s", tool.name, traceback.format_exc())
            return json.dumps(
                {"error": "[TOOL_ERROR] Tool execution failed: %s: %s"
                 % (type(exc).__name__, exc)}
            )
        return result_text(tool.name, result)

    def check(self, index):
        tool = self.tools[index]
        try:
            ok = tool.check_fn()
            if inspect.isawaitable(ok):
                ok = self.run_coroutine(ok)
        except Exception as exc:
            raise Unavailable("check_fn of %s raised %s: %s" % (tool.name, type(exc).__name__, exc))
        if not ok:
            raise Unavailable("check_fn of %s returned %r" % (tool.name, ok))
        return ""

    def dispatch_tool(self, tool_name, args, kwargs):
        if self.current_id is None:
            raise RuntimeError("dispatch_tool is only available while the host runs this plugin")
        self.channel.write(
            {
                "id": self.current_id,
                "callback": {
                    "op": "dispatch_tool",
                    "tool": tool_name,
                    "args": args,
                    "task_id": kwargs.get("task_id") or "",
                },
            }
        )
        answer = self.serve_until_answer()
        if "err" in answer:
            raise HostError(answer["err"].get("message", "dispatch_tool failed"))
        return answer.get("ok", "")

    def serve_until_answer(self):
        """Read frames until the host answers the callback in flight, serving the
        requests the host sends meanwhile (the dispatched call's pipeline may run this
        plugin's own hooks, or its tools)."""
        asked = self.current_id
        while True:
            frame = self.channel.read()
            if frame is None:
                raise HostError("the host closed the channel")
            if "op" not in frame:
                return frame
            self.channel.write(answer_request(self, frame))
            self.current_id = asked

    def finalize(self):
        """The host is shutting the plugin down: Hermes' on_session_finalize hooks."""
        for name in SHUTDOWN_HOOKS:
            self._invoke(name, {"session_id": None, "platform": "toolhost",
                                "reason": "shutdown"})

    def _callbacks(self, name):
        return list(self.hooks.get(name, []))

    def _invoke(self, name, kwargs, first=None):
        """Run every callback of hook `name` (Hermes: each in its own try/except)."""
        kwargs.setdefault("telemetry_schema_version", OBSERVER_SCHEMA_VERSION)
        for callback in self._callbacks(name):
            try:
                value = callback(**kwargs)
                if inspect.isawaitable(value):
                    value = self.run_coroutine(value)
            except Exception:
                log.warning("hook %s callback %s raised:\n%s", name,
                            getattr(callback, "__name__", repr(callback)), traceback.format_exc())
                continue
            if first is not None and first(value):
                return value
        return None

    def hook(self, kind, event_text):
        event = json.loads(event_text) if event_text else {}
        handler = getattr(self, "_hook_" + kind, None)
        if handler is None:
            return None
        return handler(event)

    def _hook_pre_tool_call(self, event):
        ctx = event.get("context") or {}
        original = event.get("args")
        if not isinstance(original, dict):
            original = {}
        args = copy.deepcopy(original)
        base = {
            "tool_name": event.get("tool", ""),
            "task_id": ctx.get("task_id", ""),
            "session_id": ctx.get("session_id", ""),
            "tool_call_id": ctx.get("tool_call_id", ""),
            "turn_id": "",
            "api_request_id": "",
        }
        trace = []
        for callback in self.middleware.get("tool_request", []):
            kwargs = dict(base, args=copy.deepcopy(args), original_args=copy.deepcopy(original),
                          telemetry_schema_version=OBSERVER_SCHEMA_VERSION)
            try:
                value = callback(**kwargs)
            except Exception as exc:
                return block("tool_request middleware of plugin %s raised %s: %s"
                             % (self.manifest.name, type(exc).__name__, exc))
            if isinstance(value, dict) and isinstance(value.get("args"), dict):
                args = value["args"]
                trace.append({"source": value.get("source", "plugin"),
                              "reason": value.get("reason", ""),
                              "name": self.manifest.name})
        for callback in self._callbacks("pre_tool_call"):
            kwargs = dict(base, args=args, middleware_trace=trace,
                          telemetry_schema_version=OBSERVER_SCHEMA_VERSION)
            try:
                value = callback(**kwargs)
            except Exception as exc:
                # Fail closed: a policy hook that crashes does not let the call through.
                return block("pre_tool_call hook of plugin %s raised %s: %s"
                             % (self.manifest.name, type(exc).__name__, exc))
            if not isinstance(value, dict):
                continue
            action = value.get("action")
            message = value.get("message")
            if action == "block" and isinstance(message, str) and message:
                return block(message)
            if action == "approve":
                # Hermes escalates to the human approval gate; toolhost has no such
                # directive for plugins yet, so the call is refused (fail closed).
                reason = message or value.get("rule_key") or "approval required"
                return block("plugin %s requires approval for this call: %s"
                             % (self.manifest.name, reason))
        if args != original:
            return {"action": "rewrite", "args": args}
        return {"action": "allow"}

    def _call_kwargs(self, event, trace):
        ctx = event.get("context") or {}
        status = event.get("status", "ok")
        result = event.get("result", "")
        error_type, error_message = error_fields(status, result)
        kwargs = {
            "tool_name": event.get("tool", ""),
            "args": event.get("args") or {},
            "result": result,
            "task_id": ctx.get("task_id", ""),
            "session_id": ctx.get("session_id", ""),
            "tool_call_id": ctx.get("tool_call_id", ""),
            "turn_id": "",
            "api_request_id": "",
            "duration_ms": int(event.get("duration_ms", 0) or 0),
            "status": status,
            "error_type": error_type,
            "error_message": error_message,
        }
        if trace:
            kwargs["middleware_trace"] = []
        return kwargs

    def _hook_post_tool_call(self, event):
        self._invoke("post_tool_call", self._call_kwargs(event, True))
        return None

    def _hook_transform_tool_result(self, event):
        return self._invoke("transform_tool_result", self._call_kwargs(event, False),
                            first=lambda v: isinstance(v, str))

    def _hook_transform_terminal_output(self, event):
        kwargs = {
            "command": event.get("command", ""),
            "output": event.get("output", ""),
            "returncode": event.get("exit_code", 0),
            "task_id": event.get("task_id", ""),
            "env_type": event.get("env_type", ""),
        }
        return self._invoke("transform_terminal_output", kwargs,
                            first=lambda v: isinstance(v, str))

    def _approval_kwargs(self, event):
        keys = list(event.get("rule_keys") or [])
        kwargs = {
            "command": event.get("command", ""),
            "description": event.get("description", ""),
            "pattern_key": keys[0] if keys else "",
            "pattern_keys": keys,
            "session_key": event.get("session_key", ""),
            "surface": event.get("surface", ""),
            "turn_id": "",
            "tool_call_id": event.get("tool_call_id", ""),
        }
        if event.get("choice") is not None:
            kwargs["choice"] = event.get("choice")
        return kwargs

    def _hook_pre_approval_request(self, event):
        self._invoke("pre_approval_request", self._approval_kwargs(event))
        return None

    def _hook_post_approval_response(self, event):
        self._invoke("post_approval_response", self._approval_kwargs(event))
        return None


class LoadFailure(Exception):
    """The plugin cannot be loaded (Hermes records these as the plugin's error)."""


class Unavailable(Exception):
    """A tool's check_fn said no."""


def block(message):
    return {"action": "block", "message": message}


def error_fields(status, result):
    """Hermes' error_type / error_message of a finished call."""
    error_type = {"blocked": "plugin_block", "timeout": "tool_timeout",
                  "cancelled": "keyboard_interrupt"}.get(status)
    error_message = None
    if status != "ok":
        try:
            parsed = json.loads(result)
            if isinstance(parsed, dict) and parsed.get("error"):
                error_message = str(parsed["error"])
        except (ValueError, TypeError):
            pass
        if error_type is None:
            error_type = "tool_error"
    return error_type, error_message


def result_text(name, result):
    """A handler's return value as the JSON text of a tool result (Hermes' contract)."""
    if isinstance(result, str):
        try:
            json.loads(result)
            return result
        except ValueError:
            return json.dumps(result)
    if isinstance(result, dict) and result.get("_multimodal") and isinstance(result.get("content"), list):
        return json.dumps(result)
    type_name = type(result).__name__
    log.error("tool %s returned unsupported result type %s", name, type_name)
    return json.dumps(
        {
            "error": "Tool handler returned unsupported result type: %s" % type_name,
            "error_type": "tool_result_contract",
            "tool": name,
            "result_type": type_name,
        }
    )


def entry_points():
    eps = importlib.metadata.entry_points()
    if hasattr(eps, "select"):
        return list(eps.select(group=ENTRY_POINTS_GROUP))
    if isinstance(eps, dict):
        return list(eps.get(ENTRY_POINTS_GROUP, []))
    return [ep for ep in eps if ep.group == ENTRY_POINTS_GROUP]


def list_entry_points():
    """`--list-entry-points`: the group's entry points as JSON on stdout."""
    found = []
    for ep in entry_points():
        dist = getattr(ep, "dist", None)
        meta = getattr(dist, "metadata", None)
        location = ""
        try:
            location = str(dist.locate_file("")) if dist is not None else ""
        except Exception:
            location = ""
        found.append(
            {
                "name": ep.name,
                "value": ep.value,
                "distribution": getattr(dist, "name", "") or (meta["Name"] if meta else ""),
                "version": getattr(dist, "version", "") or "",
                "summary": (meta["Summary"] if meta and meta["Summary"] else ""),
                "location": location,
            }
        )
    sys.stdout.write(json.dumps(found))
    sys.stdout.flush()


# --------------------------------------------------------------------------- serving


def error_answer(kind, message, detail=None):
    err = {"kind": kind, "message": message}
    if detail:
        err["detail"] = detail
    return {"err": err}


def serve(spec):
    channel = Channel()
    logging.basicConfig(
        level=os.environ.get("TOOLHOST_PYTHON_PLUGIN_LOG", "WARNING").upper(),
        format="[python plugin %s] %%(levelname)s %%(name)s: %%(message)s" % spec.get("name", ""),
        stream=sys.stderr,
    )
    plugin = Plugin(spec, channel)
    try:
        plugin.load()
    except BaseException as exc:  # import errors, SystemExit, a failing register
        detail = traceback.format_exc()
        message = str(exc) if isinstance(exc, LoadFailure) else "%s: %s" % (type(exc).__name__, exc)
        answer = error_answer("load", message, detail)
        answer["id"] = 0
        channel.write(answer)
        return
    channel.write(dict({"id": 0}, ok=json.dumps(plugin.declaration())))
    # SIGTERM (the host's second request to exit) unwinds like an exit, so that the
    # finalize hooks and atexit handlers still run; SIGKILL follows after a grace period.
    # A handler the plugin installed itself is left alone.
    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    try:
        while True:
            request = channel.read()
            if request is None:
                return
            channel.write(answer_request(plugin, request))
    finally:
        plugin.current_id = None
        plugin.finalize()


def answer_request(plugin, request):
    """Run one request of the host and build its answer frame."""
    rid = request.get("id", 0)
    plugin.current_id = rid
    try:
        answer = run(plugin, request)
    except Unavailable as exc:
        answer = error_answer("unavailable", str(exc))
    except Exception as exc:
        log.error("%s failed:\n%s", request.get("op"), traceback.format_exc())
        answer = error_answer("panic", "%s: %s" % (type(exc).__name__, exc))
    plugin.current_id = None
    answer["id"] = rid
    return answer


def run(plugin, request):
    op = request.get("op")
    if op == "call":
        return {"ok": plugin.call(request["index"], request.get("args"), request.get("context"))}
    if op == "check":
        return {"ok": plugin.check(request["index"])}
    if op == "hook":
        return {"ok": json.dumps(plugin.hook(request["kind"], request.get("event")))}
    return error_answer("protocol", "unknown op %r" % op)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--list-entry-points":
        list_entry_points()
        return
    if len(sys.argv) < 2:
        sys.stderr.write("usage: hermes_host <spec JSON> | --list-entry-points\n")
        sys.exit(2)
    serve(json.loads(sys.argv[1]))


main()
