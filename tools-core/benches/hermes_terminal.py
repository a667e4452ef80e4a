#!/usr/bin/env python3
"""Hermes Agent 0.19.0's terminal tool, local backend: `echo hi` round trip.

Times `tools.terminal_tool.terminal_tool(command="echo hi")` through the registry
(`registry.dispatch("terminal", {...})`), warm (the environment and its session
snapshot already exist), the same thing toolhost's `terminal_roundtrip` bench measures
for its local backend.

Usage: /work/hermes-venv/bin/python tools-core/benches/hermes_terminal.py [-n 200] [-r 5]
Prints median / min / max per-call milliseconds over R repetitions of N calls.
"""
import argparse
import json
import os
import statistics
import time

os.environ.setdefault("HERMES_HOME", "/tmp/hermes-bench-home")
os.environ.setdefault("HERMES_DISABLE_LAZY_INSTALLS", "1")
os.environ.setdefault("TERMINAL_ENV", "local")
os.environ.setdefault("HERMES_YOLO_MODE", "1")  # no approval prompts for `echo hi`

import model_tools  # noqa: E402,F401  (registers the tools)
from tools.registry import registry  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=200)
    ap.add_argument("-r", type=int, default=5)
    args = ap.parse_args()

    call = lambda: registry.dispatch("terminal", {"command": "echo hi"}, task_id="bench")
    first = json.loads(call())
    assert first.get("output", "").strip() == "hi", first
    for _ in range(20):
        call()
    per_call = []
    for _ in range(args.r):
        t0 = time.perf_counter()
        for _ in range(args.n):
            call()
        per_call.append((time.perf_counter() - t0) / args.n * 1000)
    print(
        f"hermes terminal local echo hi: median {statistics.median(per_call):.3f} ms "
        f"(min {min(per_call):.3f}, max {max(per_call):.3f}) over {args.r}x{args.n} calls"
    )


if __name__ == "__main__":
    main()
