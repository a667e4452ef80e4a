#!/usr/bin/env bash
# Installs the third-party MCP software the MCP integration tests run against:
#   - @modelcontextprotocol/server-everything (npm), the reference MCP server;
#   - mcp-server-time (PyPI), a real Python MCP server;
#   - mcp (PyPI), the official Python SDK, whose client drives `toolhost mcp serve`.
# Idempotent; runs as root on a fresh Debian bookworm. Everything goes under one prefix:
#   $TOOLHOST_MCP_PREFIX (default /opt/toolhost-mcp)
#     node_modules/.bin/mcp-server-everything
#     venv/bin/python, venv/bin/mcp-server-time
# The tests read TOOLHOST_MCP_PREFIX (same default), so CI needs no other variable.
set -euo pipefail

PREFIX="${TOOLHOST_MCP_PREFIX:-/opt/toolhost-mcp}"
EVERYTHING_VERSION="2026.8.31"
MCP_VERSION="2.3.0"
TIME_VERSION="2026.10.19"

need_apt=()
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)
command -v python3 >/dev/null 2>&1 || need_apt+=(python3)
if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
    need_apt+=(python3-venv)
fi
if [ "${#need_apt[@]}" -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need_apt[@]}"
fi

mkdir -p "$PREFIX"

# npm: a private package.json under the prefix pins the server version.
if ! grep -qs "\"version\": \"$EVERYTHING_VERSION\"" \
    "$PREFIX/node_modules/@modelcontextprotocol/server-everything/package.json"; then
    [ -f "$PREFIX/package.json" ] ||
        echo '{"name":"toolhost-mcp-fixtures","private":true}' > "$PREFIX/package.json"
    npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error \
        "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION"
fi
test -x "$PREFIX/node_modules/.bin/mcp-server-everything"

# PyPI: one virtualenv with the SDK (client driver) and the time server.
if [ ! -x "$PREFIX/venv/bin/python" ]; then
    python3 -m venv "$PREFIX/venv"
fi
if ! "$PREFIX/venv/bin/python" - "$MCP_VERSION" "$TIME_VERSION" <<'PY' >/dev/null 2>&1
import sys
from importlib.metadata import version
assert version("mcp") == sys.argv[1] and version("mcp-server-time") == sys.argv[2]
PY
then
    "$PREFIX/venv/bin/pip" install -q --disable-pip-version-check \
        "mcp==$MCP_VERSION" "mcp-server-time==$TIME_VERSION"
fi
test -x "$PREFIX/venv/bin/mcp-server-time"

# .ci/run exports what the setup scripts write here into the test run.
if [ -d /tmp/toolhost-ci ]; then
    echo "TOOLHOST_MCP_PREFIX=$PREFIX" >> /tmp/toolhost-ci/env
fi
echo "MCP test fixtures ready under $PREFIX"
