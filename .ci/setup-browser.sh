#!/usr/bin/env bash
# Installs what the browser tests need (plugins/browser, CI), as root on a fresh Debian
# bookworm: the `chromium` package. Idempotent: an installed Chromium is reused.
#
# The path of the binary is written to $TOOLHOST_CI_DIR/env (default /tmp/toolhost-ci) as
# TOOLHOST_CHROMIUM, which the browser plugin and its tests read.
set -euo pipefail

CI_DIR="${TOOLHOST_CI_DIR:-/tmp/toolhost-ci}"
mkdir -p "$CI_DIR"
chmod 755 "$CI_DIR"

log() { echo "[setup-browser] $*"; }

# ---------------------------------------------------------------- package
find_chromium() {
    for name in chromium chromium-browser google-chrome-stable google-chrome; do
        if command -v "$name" >/dev/null 2>&1; then command -v "$name"; return 0; fi
    done
    return 1
}
if ! CHROMIUM="$(find_chromium)"; then
    log "installing chromium"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends chromium >/dev/null
    CHROMIUM="$(find_chromium)"
fi
"$CHROMIUM" --version >/dev/null 2>&1 || { log "$CHROMIUM does not run"; exit 1; }

# ---------------------------------------------------------------- env file
# Other setup scripts write to the same file: replace only this script's lines.
touch "$CI_DIR/env"
grep -v -E '^export TOOLHOST_CHROMIUM=' "$CI_DIR/env" > "$CI_DIR/env.tmp" || true
mv "$CI_DIR/env.tmp" "$CI_DIR/env"
echo "export TOOLHOST_CHROMIUM=$CHROMIUM" >> "$CI_DIR/env"
log "ready: $("$CHROMIUM" --version 2>/dev/null); test environment in $CI_DIR/env"
