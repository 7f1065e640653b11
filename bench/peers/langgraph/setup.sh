#!/usr/bin/env bash
# Installs the pinned LangGraph.js peer (package-lock.json) and builds
# better-sqlite3's native addon from source against the local Node headers
# (no prebuilt-binary download: only the npm registry is reachable).
# Idempotent: does nothing if node_modules already matches and loads.
#
#   bash bench/peers/langgraph/setup.sh          # install if needed
#   FORCE=1 bash bench/peers/langgraph/setup.sh  # wipe node_modules and reinstall
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

log() { printf 'langgraph-setup: %s\n' "$*" >&2; }

command -v node >/dev/null || { log "node not found"; exit 1; }
command -v npm >/dev/null || { log "npm not found"; exit 1; }
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then log "need Node >= 20 (have $(node --version))"; exit 1; fi

# Node headers for node-gyp: prefer the installed Node's own include dir
# (e.g. /usr/include/node), so node-gyp never tries to download them.
if [ -z "${NODEDIR:-}" ]; then
  prefix=$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")
  for d in "$prefix" /usr /usr/local; do
    if [ -f "$d/include/node/node.h" ] && [ -f "$d/include/node/common.gypi" ]; then NODEDIR=$d; break; fi
  done
fi

loads() {
  node --input-type=module -e '
    import Database from "better-sqlite3";
    import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
    import { StateGraph } from "@langchain/langgraph";
    const db = new Database(":memory:"); db.prepare("select 1").get(); db.close();
  ' >/dev/null 2>&1
}

lock_current() {
  # npm writes node_modules/.package-lock.json on install; if it matches the
  # committed lock for all packages, the tree is what package-lock.json pins.
  [ -f node_modules/.package-lock.json ] || return 1
  node -e '
    const fs = require("fs");
    const a = JSON.parse(fs.readFileSync("package-lock.json")).packages;
    const b = JSON.parse(fs.readFileSync("node_modules/.package-lock.json")).packages;
    for (const [k, v] of Object.entries(a)) {
      if (k === "" || v.optional && !b[k]) continue;
      if (!b[k] || b[k].version !== v.version) process.exit(1);
    }
  ' 2>/dev/null
}

if [ "${FORCE:-0}" = 1 ]; then rm -rf node_modules; fi

if lock_current && loads; then
  log "up to date (node $(node --version))"
  exit 0
fi

# Build tools for node-gyp.
missing=()
command -v python3 >/dev/null || missing+=(python3)
command -v make >/dev/null || missing+=(make)
command -v g++ >/dev/null || missing+=(g++)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "installing ${missing[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 make g++ >/dev/null
  else
    log "missing build tools: ${missing[*]}"; exit 1
  fi
fi

if [ -z "${NODEDIR:-}" ]; then
  log "Node headers (include/node/node.h) not found; set NODEDIR=<prefix> or install the nodejs dev headers"
  exit 1
fi

log "npm ci (scripts off)"
npm ci --no-update-notifier --ignore-scripts --no-audit --no-fund --loglevel=error >&2

log "building better-sqlite3 from source against $NODEDIR/include/node"
npm rebuild --no-update-notifier better-sqlite3 --build-from-source --nodedir="$NODEDIR" --loglevel=error >&2

if ! loads; then
  log "better-sqlite3 / langgraph still fail to load:"
  node -e 'new (require("better-sqlite3"))(":memory:")' || true
  exit 1
fi
log "ok (node $(node --version), nodedir $NODEDIR)"
