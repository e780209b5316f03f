#!/usr/bin/env bash
# Builds the request-decoder and connection-state-machine fuzz target (heads, bodies by length or chunked, answers) with libFuzzer + AddressSanitizer and runs it.
#
#   Tests/Fuzz/run.sh [seconds]                   # default 60
#   FUZZ_TARGET=resp Tests/Fuzz/run.sh [seconds]  # the Redis reply parser instead
#
# Works from any directory. Build output, the working corpus (seeded from
# Tests/Fuzz/corpus, which is never written to) and crash artifacts go to
# .build/fuzz/ (override with FUZZ_WORK_DIR). Exits non-zero on any crash,
# failed check, timeout, out-of-memory, over-limit allocation or leak.
# Environment: SWIFTC (compiler), FUZZ_WORK_DIR, FUZZ_EXTRA_FLAGS (more libFuzzer flags),
# FUZZ_TARGET (`request-parser`, the default, or `resp`).
set -euo pipefail

seconds="${1:-60}"
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || (( seconds < 1 )); then
    echo "usage: $0 [seconds]" >&2
    exit 2
fi

fuzz_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$fuzz_dir/../.." && pwd)"
work="${FUZZ_WORK_DIR:-$repo/.build/fuzz}"
http="$repo/Sources/AmodbHTTP/HTTP"
server="$repo/Sources/AmodbHTTP/Server"

swiftc="${SWIFTC:-$(command -v swiftc || true)}"
[[ -n "$swiftc" ]] || swiftc=/opt/swift/usr/bin/swiftc
[[ -x "$swiftc" ]] || { echo "run.sh: no swiftc (set SWIFTC)" >&2; exit 2; }

# What both fuzzers share: FuzzSupport.swift, and the tests' SplitMix64 (one file, no imports).
shared=(
    "$fuzz_dir/FuzzSupport.swift"
    "$repo/Sources/AmodbTestSupport/SplitMix64.swift"
)

# The parser, the connection state machine and the few files of AmodbHTTP they need.
sources=(
    "${shared[@]}"
    "$fuzz_dir/RequestParserFuzzer.swift"
    "$fuzz_dir/ConnectionMachineFuzzing.swift"
    "$server/ConnectionStateMachine.swift"
    "$server/ConnectionDeadlines.swift"
    "$server/OutboundQueue.swift"
    "$http/ResponseSerializer.swift"
    "$http/HTTPResponse.swift"
    "$http/HTTPResponse+PlainText.swift"
    "$http/RenderedFields.swift"
    "$http/ThreadDate.swift"
    "$http/Clocks.swift"
    "$http/CivilTime.swift"
    "$http/RequestDecoder.swift"
    "$http/RequestHeadParser.swift"
    "$http/ChunkedBodyParser.swift"
    "$http/RequestTarget.swift"
    "$http/HTTPLimits.swift"
    "$http/HTTPParseError.swift"
    "$http/HTTPHeaders.swift"
    "$http/HTTPRequest.swift"
    "$http/RequestQuery.swift"
)

name=request-parser
module=RequestParserFuzz
seeds="$fuzz_dir/corpus"
dict="$fuzz_dir/http.dict"
if [[ "${FUZZ_TARGET:-request-parser}" == resp ]]; then
    # The RESP2 reply parser of AmodbRedis, with its own seeds, dictionary and working directory.
    resp="$repo/Sources/AmodbRedis/RESP"
    sources=(
        "${shared[@]}"
        "$fuzz_dir/RESPParserFuzzer.swift"
        "$resp/RESPParser.swift"
        "$resp/RESPLimits.swift"
        "$resp/RESPParseError.swift"
        "$resp/RESPEncoder.swift"
        "$resp/RedisValue.swift"
    )
    name=resp-parser
    module=RESPParserFuzz
    seeds="$fuzz_dir/resp-corpus"
    dict="$fuzz_dir/resp.dict"
    work="$work/resp"
elif [[ "${FUZZ_TARGET:-request-parser}" != request-parser ]]; then
    echo "run.sh: FUZZ_TARGET must be request-parser or resp" >&2
    exit 2
fi

mkdir -p "$work/corpus" "$work/artifacts"
binary="$work/$name-fuzzer"

linker=()
# lld links ASan objects without gold's flood of "Cannot export local symbol" warnings.
if [[ -x "$(dirname "$swiftc")/ld.lld" ]]; then linker=(-use-ld=lld); fi

flags=(-sanitize=fuzzer,address -parse-as-library -O -g -swift-version 6
    -enable-upcoming-feature ExistentialAny -enable-upcoming-feature InternalImportsByDefault -package-name amodb_proxy)

# AmodbBytes, which the parser imports, as a module of its own (as SwiftPM builds it).
modules="$work/modules"
mkdir -p "$modules"
"$swiftc" "${flags[@]}" -wmo -module-name AmodbBytes -emit-module -emit-module-path "$modules/AmodbBytes.swiftmodule" \
    -c "$repo"/Sources/AmodbBytes/*.swift -o "$modules/AmodbBytes.o"

echo "==> building $binary"
"$swiftc" "${flags[@]}" -module-name "$module" -I "$modules" ${linker[@]+"${linker[@]}"} \
    "${sources[@]}" "$modules/AmodbBytes.o" -o "$binary"

# The repository's seeds are copied, never written: libFuzzer adds what it finds to the working copy.
cp "$seeds"/* "$work/corpus/"
echo "==> corpus: $(find "$seeds" -type f | wc -l) seeds, $(find "$work/corpus" -type f | wc -l) in $work/corpus"

log="$work/fuzz.log"
echo "==> fuzzing for ${seconds}s (log: $log)"
set +e
# shellcheck disable=SC2086
SWIFT_BACKTRACE=enable=no "$binary" "$work/corpus" \
    -dict="$dict" \
    -max_total_time="$seconds" \
    -max_len=16384 \
    -rss_limit_mb=2048 \
    -malloc_limit_mb=512 \
    -timeout=5 \
    -detect_leaks=1 \
    -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/" \
    ${FUZZ_EXTRA_FLAGS:-} 2>&1 | tee "$log" | grep -v -E '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse)'
status="${PIPESTATUS[0]}"
set -e

echo
echo "==> result"
grep -E '^Done [0-9]+ runs in [0-9]+ second' "$log" || true
runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
time_s="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)"
echo "total executions: ${runs:-unknown} (${time_s:-?} exec/s)"

if (( status != 0 )); then
    echo "FUZZING FAILED (libFuzzer exit status $status). Reproducers:" >&2
    ls -1 "$work/artifacts/" >&2 || true
    echo "Re-run one with: $binary <file>; minimize with: $binary -minimize_crash=1 -runs=20000 <file>" >&2
    exit "$status"
fi
if grep -q -E '^(==[0-9]+==ERROR|SUMMARY: (Address|Leak)Sanitizer|ERROR: libFuzzer)' "$log"; then
    echo "FUZZING FAILED: a sanitizer or libFuzzer error is in the log." >&2
    exit 1
fi
echo "OK: no crash, failed check, timeout, OOM or leak."
