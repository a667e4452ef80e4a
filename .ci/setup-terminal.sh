#!/usr/bin/env bash
# Installs and starts what the terminal/environment tests need (docs/terminal.md, CI), as
# root on a fresh Debian bookworm. Idempotent: running it again reuses what is already up.
#
#   - podman + runc + catatonit (the container init the docker backend asks for) + a tiny
#     busybox image imported without registry access, served by
#     `podman system service` on a unix socket (Docker-compatible API) -> docker backend
#   - the same image plus this machine's python3 (binary, shared libraries, standard
#     library), also imported without registry access      -> execute_code in docker
#   - bubblewrap                                                     -> sandbox backend
#   - an sshd on 127.0.0.1 with generated host and client keys       -> ssh backend
#
# Everything lives under $TOOLHOST_CI_DIR (default /tmp/toolhost-ci). The variables the
# tests need are written to $TOOLHOST_CI_DIR/env (shell `export` lines); the tests read
# that file themselves when the variables are not already set, and `.ci/run` may source it.
set -euo pipefail

CI_DIR="${TOOLHOST_CI_DIR:-/tmp/toolhost-ci}"
SSH_PORT="${TOOLHOST_CI_SSH_PORT:-22022}"
IMAGE="localhost/toolhost-busybox:latest"
PY_IMAGE="localhost/toolhost-busybox-python:latest"
mkdir -p "$CI_DIR"
chmod 755 "$CI_DIR"

log() { echo "[setup-terminal] $*"; }

# ---------------------------------------------------------------- packages
need=()
for pair in curl:curl podman:podman runc:runc busybox:busybox-static bwrap:bubblewrap sshd:openssh-server ssh:openssh-client ssh-keygen:openssh-client catatonit:catatonit; do
    bin="${pair%%:*}"; pkg="${pair#*:}"
    if ! command -v "$bin" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$bin" ] && [ ! -x "/usr/libexec/podman/$bin" ]; then need+=("$pkg"); fi
done
if [ "${#need[@]}" -gt 0 ]; then
    log "installing ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# ---------------------------------------------------------------- podman
CONF="$CI_DIR/containers.conf"
# podman looks for its init in /usr/libexec/podman; point it at catatonit wherever the
# package put it.
INIT_PATH="/usr/libexec/podman/catatonit"
[ -x "$INIT_PATH" ] || INIT_PATH="$(command -v catatonit || echo "$INIT_PATH")"
cat > "$CONF" <<CONF
[containers]
default_ulimits = []
init_path = "$INIT_PATH"

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
export CONTAINERS_CONF="$CONF"

if ! podman image exists "$IMAGE" 2>/dev/null; then
    log "building $IMAGE from busybox-static"
    root="$(mktemp -d)"
    mkdir -p "$root/bin" "$root/tmp" "$root/root" "$root/etc" "$root/workspace" "$root/var/tmp" "$root/run" "$root/proc" "$root/sys" "$root/dev"
    chmod 1777 "$root/tmp" "$root/var/tmp"
    cp "$(command -v busybox)" "$root/bin/busybox"
    for applet in $("$root/bin/busybox" --list); do
        [ "$applet" = busybox ] || ln -sf busybox "$root/bin/$applet"
    done
    mkdir -p "$root/usr"; ln -s ../bin "$root/usr/bin"; ln -s ../bin "$root/sbin"
    echo 'root:x:0:0:root:/root:/bin/sh' > "$root/etc/passwd"
    echo 'root:x:0:' > "$root/etc/group"
    tar -C "$root" -cf "$CI_DIR/busybox-rootfs.tar" .
    rm -rf "$root"
    podman import --change 'CMD ["/bin/sh"]' "$CI_DIR/busybox-rootfs.tar" "$IMAGE" >/dev/null
fi

# The system interpreter (a version manager's shim on PATH is a script, not the binary).
HOST_PY="/usr/bin/python3"
[ -x "$HOST_PY" ] || HOST_PY="$(command -v python3 || true)"
if ! podman image exists "$PY_IMAGE" 2>/dev/null && [ -n "$HOST_PY" ]; then
    log "building $PY_IMAGE: busybox + $HOST_PY"
    root="$(mktemp -d)"
    tar -C "$root" -xf "$CI_DIR/busybox-rootfs.tar" 2>/dev/null || podman export "$(podman create "$IMAGE")" | tar -C "$root" -xf -
    py="$("$HOST_PY" -c 'import os, sys; print(os.path.realpath(sys.executable))')"
    ver="$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
    stdlib="$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')"
    dynload="$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("DESTSHARED") or "")')"
    # /usr/bin is a link to /bin in the busybox tree; the interpreter finds its standard
    # library under its build prefix (/usr/lib/pythonX.Y).
    cp "$py" "$root/bin/python$ver"
    ln -sf "python$ver" "$root/bin/python3"
    mkdir -p "$root$stdlib"
    tar -C "$stdlib" --exclude=test --exclude=tests --exclude=idlelib --exclude=tkinter \
        --exclude=turtledemo --exclude=ensurepip --exclude=lib2to3 --exclude=__pycache__ \
        --exclude=site-packages --exclude=dist-packages -cf - . | tar -C "$root$stdlib" -xf -
    if [ -n "$dynload" ] && [ -d "$dynload" ] && [ ! -d "$root$dynload" ]; then
        mkdir -p "$root$dynload" && cp -a "$dynload/." "$root$dynload/"
    fi
    # The shared libraries of the interpreter and its extension modules, and the loader.
    for lib in $( { ldd "$py"; find "$root$stdlib" "$root${dynload:-$stdlib}" -name '*.so' -exec ldd {} \; ; } 2>/dev/null \
                  | grep -oE '/[^ ]+\.so[^ ]*' | sort -u); do
        [ -e "$lib" ] || continue
        mkdir -p "$root$(dirname "$lib")"
        cp -L "$lib" "$root$lib"
    done
    tar -C "$root" -cf "$CI_DIR/busybox-python-rootfs.tar" .
    rm -rf "$root"
    podman import --change 'CMD ["/bin/sh"]' "$CI_DIR/busybox-python-rootfs.tar" "$PY_IMAGE" >/dev/null
    rm -f "$CI_DIR/busybox-python-rootfs.tar"
fi

SOCK="$CI_DIR/podman.sock"
if ! curl -fsS --unix-socket "$SOCK" http://d/_ping >/dev/null 2>&1; then
    log "starting podman system service on $SOCK"
    rm -f "$SOCK"
    # The service runs in a PID namespace of its own: podman 4.3 kills exec sessions by
    # recorded host pid when a container is removed, and with pids wrapping quickly on a
    # busy 2-core machine a stale pid can belong to anything. Inside its own namespace a
    # stray signal can only reach podman's own processes.
    # From `/`: the service and every conmon it starts inherit this working directory,
    # and a directory deleted later breaks container starts ("Failed to get working
    # directory").
    (cd / && exec setsid nohup unshare --pid --fork --mount-proc \
        podman system service --time=0 "unix://$SOCK" >"$CI_DIR/podman-service.log" 2>&1 < /dev/null) &
    echo $! > "$CI_DIR/podman-service.pid"
    for _ in $(seq 1 100); do
        [ -S "$SOCK" ] && curl -fsS --unix-socket "$SOCK" http://d/_ping >/dev/null 2>&1 && break
        sleep 0.1
    done
fi
curl -fsS --unix-socket "$SOCK" http://d/_ping >/dev/null || { log "podman service did not come up"; cat "$CI_DIR/podman-service.log"; exit 1; }

# ---------------------------------------------------------------- sshd
SSH_DIR="$CI_DIR/ssh"
mkdir -p "$SSH_DIR" /run/sshd
chmod 700 "$SSH_DIR"
[ -f "$SSH_DIR/host_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -f "$SSH_DIR/host_ed25519"
[ -f "$SSH_DIR/client_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -f "$SSH_DIR/client_ed25519"
cp "$SSH_DIR/client_ed25519.pub" "$SSH_DIR/authorized_keys"
chmod 600 "$SSH_DIR/authorized_keys"
echo "[127.0.0.1]:$SSH_PORT $(cut -d' ' -f1,2 "$SSH_DIR/host_ed25519.pub")" > "$SSH_DIR/known_hosts"
cat > "$SSH_DIR/sshd_config" <<SSHD
Port $SSH_PORT
ListenAddress 127.0.0.1
HostKey $SSH_DIR/host_ed25519
AuthorizedKeysFile $SSH_DIR/authorized_keys
PidFile $SSH_DIR/sshd.pid
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
MaxSessions 64
MaxStartups 64:30:128
Subsystem sftp internal-sftp
SSHD
if ! { [ -f "$SSH_DIR/sshd.pid" ] && kill -0 "$(cat "$SSH_DIR/sshd.pid")" 2>/dev/null; }; then
    log "starting sshd on 127.0.0.1:$SSH_PORT"
    /usr/sbin/sshd -f "$SSH_DIR/sshd_config" -E "$SSH_DIR/sshd.log"
fi
for _ in $(seq 1 50); do
    ssh -o BatchMode=yes -o UserKnownHostsFile="$SSH_DIR/known_hosts" -o StrictHostKeyChecking=yes \
        -i "$SSH_DIR/client_ed25519" -p "$SSH_PORT" root@127.0.0.1 true 2>/dev/null && break
    sleep 0.1
done
ssh -o BatchMode=yes -o UserKnownHostsFile="$SSH_DIR/known_hosts" -o StrictHostKeyChecking=yes \
    -i "$SSH_DIR/client_ed25519" -p "$SSH_PORT" root@127.0.0.1 true \
    || { log "sshd is not reachable"; cat "$SSH_DIR/sshd.log"; exit 1; }

# ---------------------------------------------------------------- env file
# Other setup scripts write to the same file: replace only this script's lines.
touch "$CI_DIR/env"
grep -v -E '^export (CONTAINERS_CONF|TOOLHOST_TEST_(DOCKER|SSH|BWRAP)[A-Z_]*)=' "$CI_DIR/env" > "$CI_DIR/env.tmp" || true
mv "$CI_DIR/env.tmp" "$CI_DIR/env"
cat >> "$CI_DIR/env" <<ENV
export CONTAINERS_CONF=$CONF
export TOOLHOST_TEST_DOCKER_HOST=unix://$SOCK
export TOOLHOST_TEST_DOCKER_IMAGE=$IMAGE
export TOOLHOST_TEST_SSH_HOST=127.0.0.1
export TOOLHOST_TEST_SSH_PORT=$SSH_PORT
export TOOLHOST_TEST_SSH_USER=root
export TOOLHOST_TEST_SSH_KEY=$SSH_DIR/client_ed25519
export TOOLHOST_TEST_SSH_KNOWN_HOSTS=$SSH_DIR/known_hosts
export TOOLHOST_TEST_BWRAP=$(command -v bwrap)
ENV
if podman image exists "$PY_IMAGE" 2>/dev/null; then
    echo "export TOOLHOST_TEST_DOCKER_PYTHON_IMAGE=$PY_IMAGE" >> "$CI_DIR/env"
fi
log "ready; test environment in $CI_DIR/env"
