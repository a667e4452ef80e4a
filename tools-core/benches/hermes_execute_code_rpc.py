#!/usr/bin/env python3
"""Hermes Agent 0.19.0's execute_code tool channel: one RPC round trip over its Unix
socket, measured beside toolhost's `execute_code_rpc` bench.

Starts Hermes' own server loop (`tools.code_execution_tool._rpc_server_loop`) on a Unix
socket in a thread and sends it request lines the way the generated `hermes_tools._call`
does (one JSON line, read until the newline), from the same process:

- `noop`: `model_tools.handle_function_call` replaced by a function returning
  `{"ok": true}` -- the channel alone (socket, JSON, token and allowlist checks),
  what toolhost's `execute_code/rpc_roundtrip` measures;
- `read_file`: the real `read_file` of a three-line file through Hermes' dispatch.

Usage: /opt/hermes/bin/python tools-core/benches/hermes_execute_code_rpc.py [-n 2000] [-r 5]
Prints median / min / max microseconds per call over R repetitions of N calls.
"""
import argparse
import json
import os
import socket
import statistics
import tempfile
import threading
import time

os.environ.setdefault("HERMES_HOME", "/tmp/hermes-bench-home")
os.environ.setdefault("HERMES_DISABLE_LAZY_INSTALLS", "1")

import model_tools  # noqa: E402  (registers the tools)
from tools import code_execution_tool as cet  # noqa: E402


def serve(path, token, allowed, max_calls):
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    stop = threading.Event()
    thread = threading.Thread(
        target=cet._rpc_server_loop,
        args=(server, "bench", [], [0], max_calls, frozenset(allowed), stop, token),
        daemon=True,
    )
    thread.start()
    return server, stop, thread


def call(sock, request):
    sock.sendall(request)
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = sock.recv(65536)
        if not chunk:
            raise RuntimeError("server closed")
        buf += chunk
    return json.loads(buf)


def measure(tool, args, n, reps):
    results = []
    for _ in range(reps):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "rpc.sock")
            server, stop, thread = serve(path, "t", [tool], n + 10)
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            client.connect(path)
            request = (json.dumps({"tool": tool, "args": args, "token": "t"}) + "\n").encode()
            call(client, request)  # warm
            start = time.perf_counter()
            for _ in range(n):
                call(client, request)
            results.append((time.perf_counter() - start) / n * 1e6)
            client.close()
            stop.set()
            thread.join(5)
            server.close()
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=2000)
    ap.add_argument("-r", type=int, default=5)
    opts = ap.parse_args()
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("one\ntwo\nthree\n")
        data = f.name
    real = model_tools.handle_function_call
    model_tools.handle_function_call = lambda name, args, **kw: '{"ok": true}'
    noop = measure("noop", {}, opts.n, opts.r)
    model_tools.handle_function_call = real
    read = measure("read_file", {"path": data}, max(opts.n // 10, 50), opts.r)
    os.unlink(data)
    for name, xs in (("noop", noop), ("read_file", read)):
        print(f"{name}: median {statistics.median(xs):.1f} us, min {min(xs):.1f}, max {max(xs):.1f} (per call)")


if __name__ == "__main__":
    main()
