#!/usr/bin/env bash
# The whole suite; ends with the line "N passed, N failed" (CI reads it).
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

out=$(mktemp)
./node_modules/.bin/bun test "$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
passed=$(grep -E '^ *[0-9]+ pass$' "$out" | tail -1 | awk '{print $1}')
failed=$(grep -E '^ *[0-9]+ fail$' "$out" | tail -1 | awk '{print $1}')
rm -f "$out"
echo "${passed:-0} passed, ${failed:-0} failed"
exit "$rc"
