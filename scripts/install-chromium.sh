#!/usr/bin/env bash
# Debian's chromium for the browser tests (services/auth drives the consent page with playwright-core).
# Idempotent: nothing happens when chromium is already there. Only the distribution's package, never a
# browser downloaded by a tool (`npx playwright install` is not used anywhere).
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends chromium
command -v chromium >/dev/null
