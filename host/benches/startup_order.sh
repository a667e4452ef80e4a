#!/usr/bin/env bash
# Regenerate host/startup-symbols.txt and plugins/*/startup-symbols.txt: the functions of
# the `toolhost` binary and of each bundled plugin library that short commands execute,
# in first-use order, for the linker to place together (`--symbol-ordering-file`,
# host/build.rs; README "Building for use").
#
# Why: a short command such as `toolhost schema` runs about a thousand functions spread
# over 18 MB of code; each first touch of a page maps the 64 KiB around it, so ~6 MiB of
# code ends up resident. Placed together, the same functions fit in a few hundred KiB
# (BENCHMARKS.md, cold start).
#
# The list holds mangled names, whose hashes follow Cargo.lock and the `dist` profile:
# regenerate it after a dependency update or a profile change (a stale list only loses
# the benefit; names it does not find are skipped). The names do not depend on the order,
# so the lists are read off the current dist build; build it again afterwards to apply
# them. Needs valgrind and python3.
#
#   host/benches/startup_order.sh && cargo build --profile dist -p toolhost ...
set -euo pipefail
cd "$(dirname "$0")/../.."

cargo build --profile dist -p toolhost -p toolhost-plugin-notes \
    -p toolhost-plugin-textkit -p toolhost-plugin-policy -p toolhost-plugin-web \
    -p toolhost-plugin-browser >/dev/null 2>&1
BIN=$PWD/target/dist/toolhost
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
printf 'one line\n' >"$WORK/file.txt"

# The commands whose start-up is measured and used most: definitions, listings, one call.
profile() {
    valgrind --tool=callgrind --demangle=no --callgrind-out-file="$WORK/cg.$1" \
        "$BIN" --home "$WORK/home" "${@:2}" >/dev/null 2>&1
}
profile schema schema
profile tools tools
profile toolsets toolsets
profile call call read_file "{\"path\": \"$WORK/file.txt\"}"
cat >"$WORK/message.json" <<JSON
{"role": "assistant", "tool_calls": [{"id": "1", "type": "function",
  "function": {"name": "read_file", "arguments": "{\\"path\\": \\"$WORK/file.txt\\"}"}}]}
JSON
profile dispatch dispatch "$WORK/message.json"

python3 - "$BIN" "$WORK"/cg.* <<'PY'
import os, re, sys
# The functions of the binary (argv[1]) and of the plugin libraries next to it executed
# in the callgrind profiles, first use first, each into its package's list.
binary = sys.argv[1]
lists = {binary: "host/startup-symbols.txt"}
for name in os.listdir("plugins"):
    lib = os.path.join(os.path.dirname(binary), f"libtoolhost_plugin_{name}.so")
    lists[lib] = f"plugins/{name}/startup-symbols.txt"
seen = {obj: {} for obj in lists}
for path in sys.argv[2:]:
    objects, functions, current = {}, {}, None
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        m = re.match(r"^(c?ob)=\((\d+)\)(?: (.*))?$", line)
        if m:
            if m.group(3) is not None:
                objects[m.group(2)] = m.group(3)
            if m.group(1) == "ob":
                current = objects.get(m.group(2))
            continue
        m = re.match(r"^fn=\((\d+)\)(?: (.*))?$", line)
        if m:
            if m.group(2) is not None:
                functions[m.group(1)] = m.group(2)
            # A recursion level or a second copy is written `name'2`.
            name = functions.get(m.group(1), "").split("'")[0]
            if current in seen and re.match(r"^(_ZN|_R)", name):
                seen[current].setdefault(name, None)
for obj, names in seen.items():
    if names:
        with open(lists[obj], "w") as out:
            out.write("\n".join(names) + "\n")
        print(f"{lists[obj]}: {len(names)} functions")
PY
