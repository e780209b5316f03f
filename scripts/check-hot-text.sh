#!/usr/bin/env bash
# Checks that the hot-text order (scripts/hot-text.order) still fits the static release
# binary, and that the link laid it out first. CI runs it after the release build; run it
# before pushing a change that renames, moves or rewrites a function on the request path:
#
#   scripts/check-hot-text.sh [binary]   (default: builds it with build-release.sh --static)
#
# It fails, printing the names and the command that regenerates the file, when
# - any name of this package's own code in the order is not defined in the binary: a Swift
#   name that mangles one of the package's modules, a directory of Sources/ (`9AmodbHTTP`,
#   `10AmodbProxy`, `16AmodbCompression`, `11amodb_proxy`, …, also inside the name of a
#   standard-library function specialized for one of its types) or a C function of
#   CSystemShims (`amodb_…`).
#   Such a name goes away when its code changes; lld skips it without a word
#   (build-release.sh passes --no-warn-symbol-ordering), and the function lands wherever the
#   archives put it, costing resident pages. None may be missing.
# - more than 2% of the other names (the Swift runtime, the standard library, Foundation,
#   Dispatch, ICU: the toolchain's archives) are missing. They move with the toolchain, whose
#   update is then the moment to regenerate, and a few (the standard library's generic
#   functions specialized for its own types, emitted where this package calls them) with
#   the code that calls them; the tolerance lets those and a point release's renames pass.
# - fewer than 95% of the names it lists lie in the first half of .text: the link did not use
#   the order (linked in archive order they are spread over all of it).
set -euo pipefail
# A binary named relative to where the caller stands, before moving to the repository.
if [ $# -gt 0 ]; then binary=$(realpath -- "$1"); fi
cd "$(dirname "${BASH_SOURCE[0]}")/.."
order=scripts/hot-text.order
regenerate="scripts/hot-text.sh generate"
toolchain_missing_percent_allowed=2
first_share_percent_required=95

binary=${binary:-$(scripts/build-release.sh --static | tail -1)}
[ -f "$order" ] || { echo "check-hot-text: no $order; make it with: $regenerate"; exit 1; }
[ -x "$binary" ] || { echo "check-hot-text: no binary at $binary"; exit 2; }
command -v nm >/dev/null || { echo "check-hot-text: nm is missing (apt-get install binutils)"; exit 2; }
# The order names the runtime's and Foundation's functions too, which only the static binary
# holds: a dynamic one would read as a toolchain that renamed them all.
if readelf -d "$binary" | grep -q 'NEEDED.*libswiftCore'; then
  echo "check-hot-text: $binary loads the Swift runtime: check the static binary (scripts/build-release.sh --static)"
  exit 2
fi

python3 - "$binary" "$order" "$regenerate" "$toolchain_missing_percent_allowed" \
  "$first_share_percent_required" <<'PY'
import os, re, subprocess, sys

binary, order, regenerate = sys.argv[1], sys.argv[2], sys.argv[3]
toolchain_allowed, first_required = int(sys.argv[4]), int(sys.argv[5])

# The package's modules (its targets' directories under Sources/, `-` read as `_`), as
# Swift mangles them: <length><name>. Not preceded by a digit, so that `19AmodbHTTPThing`
# (an identifier of 19 characters) does not count as `9AmodbHTTP`.
modules = sorted(d.replace("-", "_") for d in os.listdir("Sources")
                 if os.path.isdir(os.path.join("Sources", d)))
ours = re.compile("(?<![0-9])(?:" + "|".join(f"{len(m)}{m}" for m in modules) + ")"
                  r"|^amodb_")

names = [line.strip() for line in open(order) if line.strip() and not line.startswith("#")]
text_start = text_size = None
for line in subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True,
                           check=True).stdout.splitlines():
    fields = line.split("]", 1)[-1].split()
    if fields[:1] == [".text"]:
        text_start, text_size = int(fields[2], 16), int(fields[4], 16)
offsets = {}
for line in subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True,
                           check=True).stdout.splitlines():
    fields = line.split(" ", 2)
    if len(fields) == 3 and fields[1] in "tTwW" and fields[2] not in offsets:
        offsets[fields[2]] = int(fields[0], 16)

own = [n for n in names if ours.search(n)]
other = [n for n in names if not ours.search(n)]
own_missing = [n for n in own if n not in offsets]
other_missing = [n for n in other if n not in offsets]
print(f"check-hot-text: {binary}")
print(f"check-hot-text: the package's names: {len(own) - len(own_missing)} of {len(own)} defined")
print(f"check-hot-text: the toolchain's names: {len(other) - len(other_missing)} of {len(other)}"
      f" defined (at most {toolchain_allowed}% may be missing)")
failed = stale = False
if own_missing:
    failed = stale = True
    print(f"check-hot-text: FAILED: {len(own_missing)} of the package's names in {order} are not"
          " defined in the binary:")
    for n in own_missing:
        print(f"  {n}")
if other_missing and len(other_missing) * 100 > len(other) * toolchain_allowed:
    failed = stale = True
    print(f"check-hot-text: FAILED: {len(other_missing)} of the toolchain's names are missing"
          " (a new toolchain?); the first of them:")
    for n in other_missing[:20]:
        print(f"  {n}")
inside = [offsets[n] - text_start for n in names if n in offsets]
inside = [o for o in inside if 0 <= o < text_size]
first = sum(o < text_size * 0.5 for o in inside) * 100 // max(len(inside), 1)
print(f"check-hot-text: {first}% of them lie in the first half of .text")
if first < first_required:
    failed = True
    print(f"check-hot-text: FAILED: the link did not lay them out first (scripts/build-release.sh"
          f" passes {order} to lld); under {first_required}%")
if stale:
    print(f"check-hot-text: regenerate the order (valgrind; a minute once the static binary is"
          f" built), relink, then commit it: {regenerate}")
if failed:
    sys.exit(1)
print("check-hot-text: ok")
PY
