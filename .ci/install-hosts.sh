#!/usr/bin/env bash
# install-hosts.sh: install the real agent hosts (and MCP server and client) the e2e tests run (versions
# pinned as in shared/design/HOSTS.md) from the npm registry into a cache:
#   ${WARDEN_E2E_HOSTS:-$HOME/.cache/warden-e2e/hosts}/<name>@<version>
# A host already installed there is skipped, so a second run takes no time.
# Usage: bash .ci/install-hosts.sh [name ...]   (default: every host)
set -euo pipefail

root="${WARDEN_E2E_HOSTS:-$HOME/.cache/warden-e2e/hosts}"

# name|npm package|version|file that must exist once installed
hosts=(
  "claude-code|@anthropic-ai/claude-code|2.1.328|node_modules/@anthropic-ai/claude-code-linux-x64/claude"
  "codex|@openai/codex|0.169.0|node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
  "gemini-cli|@google/gemini-cli|0.61.0|node_modules/@google/gemini-cli/bundle/gemini.js"
  "opencode|opencode-ai|1.18.33|node_modules/opencode-linux-x64/bin/opencode"
  # MCP: a real server and a real client, for the `warden mcp proxy` e2e.
  "mcp-server-filesystem|@modelcontextprotocol/server-filesystem|2026.8.31|node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
  "mcp-inspector|@modelcontextprotocol/inspector|2.12.0|node_modules/.bin/mcp-inspector"
)

want=("$@")
selected() {
  [ ${#want[@]} -eq 0 ] && return 0
  local w
  for w in "${want[@]}"; do [ "$w" = "$1" ] && return 0; done
  return 1
}

mkdir -p "$root"
status=0
for h in "${hosts[@]}"; do
  IFS='|' read -r name pkg version probe <<<"$h"
  selected "$name" || continue
  dest="$root/$name@$version"
  if [ -e "$dest/$probe" ]; then
    echo "install-hosts: $name@$version already in $dest"
    continue
  fi
  echo "install-hosts: installing $pkg@$version into $dest"
  start=$(date +%s)
  tmp="$(mktemp -d "$root/.tmp-$name.XXXXXX")"
  echo '{"name":"warden-e2e-host","private":true}' >"$tmp/package.json"
  # --ignore-scripts: the binaries ship inside the platform packages; no
  # postinstall step (which may try to download) is needed.
  if ! (cd "$tmp" && npm install --no-audit --no-fund --ignore-scripts --loglevel=error \
      "$pkg@$version" >"$tmp/npm.log" 2>&1); then
    echo "install-hosts: npm install $pkg@$version failed:" >&2
    tail -n 30 "$tmp/npm.log" >&2 || true
    rm -rf "$tmp"
    status=1
    continue
  fi
  if [ ! -e "$tmp/$probe" ]; then
    echo "install-hosts: $pkg@$version installed but $probe is missing" >&2
    rm -rf "$tmp"
    status=1
    continue
  fi
  chmod +x "$tmp/$probe" || true
  rm -rf "$dest"
  mv "$tmp" "$dest"
  echo "install-hosts: $name@$version done in $(( $(date +%s) - start ))s"
done
exit $status
