#!/usr/bin/env bash
# Fails when a binary's run path (its dynamic section's RUNPATH or RPATH) holds $ORIGIN:
#
#   scripts/check-run-path.sh "$(scripts/build-release.sh | tail -1)"
#
# With $ORIGIN there, the dynamic loader looks in the binary's own directory first for the
# libraries it links (libcurl.so.4) and for those the proxy opens with dlopen
# (libcrypto.so.3, libssl.so.3, libbrotlienc.so.1, libbrotlidec.so.1): a file of that name
# dropped beside the binary would be loaded, and its constructor would run inside the
# proxy, with the amodb key in its memory. scripts/build-release.sh links with
# --disable-local-rpath; this checks that it still does. Needs readelf (binutils).
set -euo pipefail
binary=${1:?usage: scripts/check-run-path.sh BINARY}
command -v readelf >/dev/null || { echo "check-run-path.sh: readelf is missing (apt-get install binutils)" >&2; exit 2; }
[[ -f $binary ]] || { echo "check-run-path.sh: no file $binary" >&2; exit 2; }
paths=$(readelf -d "$binary" | grep -E '\((RUNPATH|RPATH)\)' || true)
if grep -q 'ORIGIN' <<<"$paths"; then
  echo "not ok - the run path of $binary holds \$ORIGIN: $paths" >&2
  exit 1
fi
echo "ok - the run path of $binary holds no \$ORIGIN (${paths:-no RUNPATH or RPATH})"
