#!/usr/bin/env bash
# App Attest sessions on the mix: every request carries the next of 1,000 devices' session
# tokens (`as1.…`, signed with a known AMODB_ATTEST_SESSION_SECRETS), with AMODB_PROOF=attested,
# so the candidate checks a session token on every request; nginx proxy_cache (which checks
# nothing) is the anchor. Compare "x nginx" with an anonymous run of the same mix
# (`../shared/bench/signed-in.sh none BINARY`) to see what checking costs.
#
#   bash Tests/Perf/attested-sessions.sh CANDIDATE_BINARY
#
# Needs ../shared/bench beside the repository (its run.sh and BENCH_TOKENS_FILE). Other
# knobs as for run.sh; BENCH_MIX defaults to 300 here.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench=${BENCH_DIR:-$here/../../../shared/bench}
[ $# -ge 1 ] || { sed -n '2,/^set /{/^#/p}' "$0"; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
secret=bench-attest-session-secret-0123456789abcdef
python3 - "$work/tokens" "$secret" <<'PY'
import base64, hashlib, hmac, os, sys, time
path, secret = sys.argv[1], sys.argv[2].encode()
b64 = lambda data: base64.urlsafe_b64encode(data).rstrip(b"=").decode()
expires = int(time.time()) + 86400
with open(path, "w") as out:
    for _ in range(1000):
        signed = f"as1.{b64(os.urandom(32))}.{expires}"
        code = hmac.new(secret, signed.encode(), hashlib.sha256).digest()
        out.write(f"{signed}.{b64(code)}\n")
PY
export BENCH_TOKENS_FILE=$work/tokens
BENCH_MIX=${BENCH_MIX:-300} BENCH_PEERS=${BENCH_PEERS-} "$bench/run.sh" env \
  AMODB_CLIENT_RATE_LIMIT=10000000 AMODB_CLIENT_BURST=10000000 \
  AMODB_ATTEST_APPS=ABCDE12345.com.example.movies AMODB_ATTEST_SESSION_SECRETS=$secret AMODB_PROOF=attested "$@"
