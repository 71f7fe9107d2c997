#!/usr/bin/env bash
# `pnpm test` as on a machine without bubblewrap, Chromium or PostgreSQL: CONTRIBUTING.md promises it
# passes there, with the tests that need them skipped. In a private mount namespace (root, or an
# unprivileged user namespace) their binaries are covered by an empty, non-executable file and
# PostgreSQL's directory by an empty tmpfs, so nothing in the run can find them. The run fails
# unless they really are gone and the suite said it skipped for each, so it cannot pass by
# accident on a machine where hiding them did not work.
set -euo pipefail
cd "$(dirname "$0")/.."

# Arguments go to vitest (a file or a name filter); then the skip reasons are not checked.
if [ "${1:-}" != "--inside" ]; then
  flags=(--mount --propagation private)
  [ "$(id -u)" = 0 ] || flags=(--user --map-root-user "${flags[@]}")
  exec unshare "${flags[@]}" bash "$0" --inside "$@"
fi
shift

blank=$(mktemp)
chmod 0644 "$blank"
for tool in bwrap chromium; do
  bin=$(command -v "$tool" || true)
  [ -n "$bin" ] && mount --bind "$blank" "$(readlink -f "$bin")"
done
[ -d /usr/lib/postgresql ] && mount -t tmpfs tmpfs /usr/lib/postgresql

# As Corral looks a tool up: an executable file of that name in a PATH directory.
on_path() { local dir; IFS=: read -ra dirs <<<"$PATH"; for dir in "${dirs[@]}"; do [ -f "$dir/$1" ] && [ -x "$dir/$1" ] && return 0; done; return 1; }
for tool in bwrap chromium; do
  if on_path "$tool"; then echo "test-without-tools: $tool is still found" >&2; exit 1; fi
done
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then echo "test-without-tools: initdb is still found" >&2; exit 1; fi

# Without arguments, the test files that name a hidden tool (or the sandbox, or PostgreSQL): a file
# that names none of them cannot reach one, and ran as it would here in `pnpm test` already. About
# a third of the suite, so the run costs CI a third of its minutes.
files=()
if [ $# -eq 0 ]; then
  mapfile -t files < <(git ls-files -- '*.test.ts' '*.test.tsx' | grep -v '^apps/server/compat/' |
    xargs grep -liE 'bwrap|bubblewrap|sandbox|chromium|postgres|initdb')
  [ ${#files[@]} -gt 0 ] || { echo "test-without-tools: no test file names a tool" >&2; exit 1; }
fi

log=$(mktemp)
if [ $# -eq 0 ]; then what="the ${#files[@]} test files that name one"; else what="$*"; fi
echo "▸ pnpm test without bubblewrap, Chromium and PostgreSQL: $what"
env -u CORRAL_REQUIRE_TOOLS pnpm test "${files[@]}" "$@" 2>&1 | tee "$log"
[ $# -eq 0 ] || exit 0
for reason in "skipped: bwrap is not installed" "skipped: PostgreSQL is not installed"; do
  if ! grep -q "$reason" "$log"; then echo "test-without-tools: the run never said \"$reason\"" >&2; exit 1; fi
done
