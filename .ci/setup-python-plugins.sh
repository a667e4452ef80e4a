#!/usr/bin/env bash
# Installs three real third-party Hermes Agent plugins from PyPI into one throwaway
# virtualenv, for the Python-plugin tests (tests/tests/suite/pyplug_hermes_pypi.rs).
# Chosen because using them needs no network and no account:
#   - noisegate-hermes: transform_tool_result / transform_terminal_output hooks that
#     compact noisy tool output deterministically (no dependencies);
#   - hermes-loop-plugin: six loop_* tools keeping a task counter in a state file in the
#     working directory, plus a post_tool_call hook (no dependencies);
#   - hermes-dreaming: six dreaming_* tools over MEMORY.md / USER.md under ~/.hermes
#     (filelock, PyYAML).
# And the random sample of Hermes plugins (docs/python-plugins.md, "PyPI sample": seed 2828
# over the package list's Hermes plugins; the ones that load under Hermes 0.19.0 and
# need no outside service), driven by tests/tests/suite/pyplug_hermes_pypi.rs:
#   - openwolf-hermes: pre_tool_call bookkeeping in a project's .wolf/ directory;
#   - agentguard-spend-hermes: approval observers (and LLM middleware, not served);
#   - html-to-markdown-hermes-plugin: one tool bridging to a local MCP CLI, skills;
#   - lossless-hermes-py: a context engine (not served; loads);
#   - cluxion-hermes-call-cli: slash and CLI commands (not served; loads).
# Node (for the Node/V8 child test of pyplug_lifecycle.rs) is installed when missing.
# Idempotent; the venv lives at $TOOLHOST_PYPLUG_VENV (default /opt/toolhost-pyplug/venv)
# and is exported for the tests through /tmp/toolhost-ci/env.
set -euo pipefail

VENV="${TOOLHOST_PYPLUG_VENV:-/opt/toolhost-pyplug/venv}"
PACKAGES=(
    "noisegate-hermes==0.3.3"
    "hermes-loop-plugin==1.0.2"
    "hermes-dreaming==0.3.2"
    "openwolf-hermes==0.1.0"
    "agentguard-spend-hermes==0.4.1"
    "html-to-markdown-hermes-plugin==3.18.7"
    "lossless-hermes-py==0.1.6"
    "cluxion-hermes-call-cli==0.3.13"
)

need_apt=()
if ! command -v python3 >/dev/null 2>&1 || ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
    need_apt+=(python3 python3-venv)
fi
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
if [ "${#need_apt[@]}" -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need_apt[@]}"
fi

if [ ! -x "$VENV/bin/python" ]; then
    mkdir -p "$(dirname "$VENV")"
    python3 -m venv "$VENV"
fi
installed() { # every pinned package present at its version
    for spec in "${PACKAGES[@]}"; do
        local shown
        shown="$("$VENV/bin/python" -m pip show "${spec%%==*}" 2>/dev/null || true)"
        grep -qx "Version: ${spec##*==}" <<<"$shown" || return 1
    done
}
if ! installed; then
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "${PACKAGES[@]}"
fi
installed

mkdir -p /tmp/toolhost-ci
touch /tmp/toolhost-ci/env
grep -q '^export TOOLHOST_TEST_PYPLUG_PYTHON=' /tmp/toolhost-ci/env ||
    echo "export TOOLHOST_TEST_PYPLUG_PYTHON=$VENV/bin/python" >> /tmp/toolhost-ci/env
