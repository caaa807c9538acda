#!/usr/bin/env bash
# The test tiers (test/unit, test/integration, test/e2e; all three unless some are named, e.g.
# `npm test -- unit` or `npm test -- test/integration/catalog`), run in parallel lanes by
# scripts/test-run.ts, which prints each file's duration and ends with the line "N passed, N failed"
# (CI reads it). TEST_LANES=1 runs one lane (the old serial run).
# Beyond npm packages the tests use independent tools from Debian's packages: zbarimg (decodes
# barcodes), pdftoppm and pdftotext (poppler), Ghostscript, and headless Chromium (renders /docs).
# When one is missing and this runs as root with apt-get, it is installed here; otherwise the
# tests that need it fail and say what to install.
set -uo pipefail
cd "$(dirname "$0")/.."

need=()
command -v zbarimg >/dev/null || need+=(zbar-tools)
command -v pdftoppm >/dev/null || need+=(poppler-utils)
command -v gs >/dev/null || need+=(ghostscript)
command -v chromium >/dev/null || command -v chromium-browser >/dev/null || need+=(chromium)
# the README quick start's test runs its curl commands as written
command -v curl >/dev/null || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
  # as root directly; a normal user through sudo when it needs no password (never a prompt)
  as_root=()
  [ "$(id -u)" = 0 ] || { command -v sudo >/dev/null && sudo -n true 2>/dev/null && as_root=(sudo -n); }
  if { [ "$(id -u)" = 0 ] || [ ${#as_root[@]} -gt 0 ]; } && command -v apt-get >/dev/null; then
    echo "installing test tools: ${need[*]}"
    { "${as_root[@]}" apt-get update -qq &&
      "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"; } >/dev/null ||
      echo "could not install ${need[*]}; the tests that need them will fail"
  else
    echo "missing test tools (apt-get needs root or password-less sudo, so not installed here): ${need[*]}"
  fi
fi

exec ./node_modules/.bin/bun scripts/test-run.ts "$@"
