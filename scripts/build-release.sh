#!/usr/bin/env bash
# Builds the release amodb-proxy: the one way the Dockerfile, the README, CI and the test
# scripts build it. Build output goes to standard error; the last line of output, and the
# only one on standard output, is the binary's absolute path:
#
#   bin=$(scripts/build-release.sh | tail -1)            # the Swift runtime linked dynamically
#   bin=$(scripts/build-release.sh --static | tail -1)   # runtime and Foundation linked in,
#                                                        # as the container ships it
#
# `--static` is `--static-swift-stdlib`: the binary then links only libc, libstdc++, libgcc_s,
# libz and libcurl (FoundationNetworking) at run time, and opens libcrypto (libssl3) and
# brotli (libbrotli1) with glibc's dlopen as any build does; on the host it needs
# libcurl4-openssl-dev to link (the static FoundationNetworking links -lcurl).
#
# The release-only flags live here, not in Package.swift: SwiftPM refuses a versioned
# dependency whose targets carry `unsafeFlags`, and apps take AmodbClient and AmodbModels
# from this package at a version tag.
# - `-cross-module-optimization` for every Swift target: a cache hit runs through AmodbHTTP,
#   AmodbCompression and AmodbProxy, and calls between them are inlined.
# - `-disable-type-layout` (a frontend option): copies and destroys of the hit path's structs
#   and optionals (a response, a log entry, a `String?`) are then emitted field by field, as a
#   retain or a release each, instead of through the type's value witnesses (a metadata lookup
#   and an indirect call per copy): ~600 fewer instructions per cache hit of ~21,000
#   (Tests/Perf/instructions-per-hit.sh). Debug builds and the tests' builds keep the default.
# - On Linux, the link by lld with packed relative relocations (RELR, glibc >= 2.36): a
#   position-independent binary otherwise carries ~1.9 MB of relocation records that the
#   loader reads, and so keeps resident, at every start.
# - `--disable-local-rpath`: SwiftPM otherwise puts `$ORIGIN` in the binary's run path, and
#   the loader would then take libcurl.so.4, and the libraries opened with dlopen
#   (libcrypto, libssl, brotli), from a file of that name beside the binary, running its
#   constructor in the proxy. Nothing is meant to be found there: this package builds no
#   shared library. The Swift runtime is linked in (`--static`) or found through the
#   toolchain's own directory, which swiftc puts in the run path
#   (`<toolchain>/usr/lib/swift/linux`); `scripts/check-run-path.sh` checks the result.
# - On Linux, the functions a running proxy executes laid out first in the code, in the order
#   scripts/hot-text.order lists them (lld's --symbol-ordering-file): the kernel maps code
#   64 KiB around each page first executed, and laid out together they make ~5 MB less of it
#   resident than spread over the archives' order. lld's warning for each listed name the
#   binary does not define is off: scripts/check-hot-text.sh (a CI step) fails on any missing
#   name of this package's code and on more than 2% of the toolchain's, and says how to
#   regenerate the file (scripts/hot-text.sh generate). Another toolchain (the Dockerfile's
#   image on a Docker host) only misses the names it spells differently: memory, not behaviour.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

arguments=(-c release --product amodb-proxy -Xswiftc -cross-module-optimization)
arguments+=(-Xswiftc -Xfrontend -Xswiftc -disable-type-layout)
for argument in "$@"; do
  case $argument in
    --static) arguments+=(--static-swift-stdlib) ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-release.sh: unknown option $argument (only --static)" >&2; exit 2 ;;
  esac
done
if [[ $(uname -s) == Linux ]]; then
  arguments+=(-Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs --disable-local-rpath)
  arguments+=(-Xlinker "--symbol-ordering-file=$(pwd)/scripts/hot-text.order" -Xlinker --no-warn-symbol-ordering)
fi

command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH
binary="$(swift build "${arguments[@]}" --show-bin-path)/amodb-proxy"
# SwiftPM relinks when an object or a flag changes, not when the order file does.
if [ -f "$binary" ] && [ scripts/hot-text.order -nt "$binary" ]; then rm -f "$binary"; fi
swift build "${arguments[@]}" >&2
echo "$binary"
