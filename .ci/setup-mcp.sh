#!/usr/bin/env bash
# Installs the third-party MCP software the MCP integration tests run against:
#   - @modelcontextprotocol/server-everything (npm), the reference MCP server;
#   - @modelcontextprotocol/server-filesystem and server-memory (npm), reference servers
#     whose results carry structured content;
#   - @modelcontextprotocol/inspector (npm), the official Inspector, whose CLI drives
#     `toolhost mcp serve`;
#   - mcp-server-time (PyPI), a real Python MCP server;
#   - mcp (PyPI), the official Python SDK, whose client drives `toolhost mcp serve`.
# Idempotent; runs as root on a fresh Debian bookworm. Everything goes under one prefix:
#   $TOOLHOST_MCP_PREFIX (default /opt/toolhost-mcp)
#     node_modules/.bin/{mcp-server-everything,mcp-server-filesystem,mcp-server-memory,mcp-inspector}
#     venv/bin/python, venv/bin/mcp-server-time
# The tests read TOOLHOST_MCP_PREFIX (same default), so CI needs no other variable.
set -euo pipefail

PREFIX="${TOOLHOST_MCP_PREFIX:-/opt/toolhost-mcp}"
EVERYTHING_VERSION="2026.8.31"
FILESYSTEM_VERSION="2026.8.31"
MEMORY_VERSION="2026.8.31"
INSPECTOR_VERSION="2.12.0"
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

# npm: a private package.json under the prefix pins the versions.
npm_pinned() { # PACKAGE VERSION: true when that version is installed
    grep -qs "\"version\": \"$2\"" "$PREFIX/node_modules/$1/package.json"
}
if ! npm_pinned @modelcontextprotocol/server-everything "$EVERYTHING_VERSION" ||
    ! npm_pinned @modelcontextprotocol/server-filesystem "$FILESYSTEM_VERSION" ||
    ! npm_pinned @modelcontextprotocol/server-memory "$MEMORY_VERSION" ||
    ! npm_pinned @modelcontextprotocol/inspector "$INSPECTOR_VERSION"; then
    [ -f "$PREFIX/package.json" ] ||
        echo '{"name":"toolhost-mcp-fixtures","private":true}' > "$PREFIX/package.json"
    npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error --save-exact \
        "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" \
        "@modelcontextprotocol/server-filesystem@$FILESYSTEM_VERSION" \
        "@modelcontextprotocol/server-memory@$MEMORY_VERSION" \
        "@modelcontextprotocol/inspector@$INSPECTOR_VERSION"
fi
for bin in mcp-server-everything mcp-server-filesystem mcp-server-memory mcp-inspector; do
    test -x "$PREFIX/node_modules/.bin/$bin"
done

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
