#!/usr/bin/env bash
# The whole suite; ends with the line "N passed, N failed" (CI reads it).
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp)
./node_modules/.bin/bun test "$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
passed=$(grep -E '^ *[0-9]+ pass$' "$out" | tail -1 | awk '{print $1}')
failed=$(grep -E '^ *[0-9]+ fail$' "$out" | tail -1 | awk '{print $1}')
rm -f "$out"
echo "${passed:-0} passed, ${failed:-0} failed"
exit "$rc"
