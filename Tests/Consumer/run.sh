#!/usr/bin/env bash
# Checks that an app can depend on this package as an app does: at a version tag. SwiftPM
# refuses a versioned dependency whose targets carry `unsafeFlags` ("contains unsafe build
# flags"), which a root package's own builds never show.
#
#   bash Tests/Consumer/run.sh [repository]     (default: this checkout, as its working tree is)
#
# 1. AmodbModels and AmodbClient import no platform module unguarded (Glibc, Musl,
#    FoundationNetworking, …): apps build them for iOS 16 and macOS 13, where those modules
#    do not exist, so one may only be imported under `#if canImport(<that module>)`.
# 2. The repository is cloned to a temporary directory (with the working tree's changes to
#    tracked files and its new, not ignored files), every tag there is dropped and 1.0.0 is
#    tagged; the consumer package in this directory (Package.swift.template, Sources/) is
#    written out depending on `file://<clone>` `from: "1.0.0"` and built with `swift build`:
#    only AmodbModels, AmodbClient and the consumer are compiled (debug, about a minute cold).
# 3. The consumer's binary runs: it makes an AmodbClient and prints it (no network).
#
# Prints `ok - …` / `not ok - …` per check, then `N passed, N failed`; exits 1 if a check
# failed. Needs git and swift (adds /opt/swift/usr/bin to PATH when swift is missing).
set -euo pipefail

consumer_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "${1:-$consumer_dir/../..}" && pwd)
command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH

passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok - $*"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $*"; }
finish() {
  echo "$passed passed, $failed failed"
  if ((failed > 0)); then exit 1; fi
  exit 0
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# --- 1. no unguarded platform imports in the libraries apps link ---------------------------
platform_modules='Glibc|Musl|Bionic|Android|WASILibc|ucrt|WinSDK|Darwin|FoundationNetworking|FoundationXML'
# Prints `path:line: text` for each import of a platform module that is not inside an
# `#if canImport(<that module>)` block (nested blocks inside it count; its #else does not).
unguarded_imports() {
  local file line number module
  local -a guards
  while IFS= read -r -d '' file; do
    number=0
    guards=()
    while IFS= read -r line || [[ -n $line ]]; do
      number=$((number + 1))
      if [[ $line =~ ^[[:space:]]*#if[[:space:]]+canImport\(([A-Za-z_]+)\)[[:space:]]*$ ]]; then
        guards+=("${BASH_REMATCH[1]}")
      elif [[ $line =~ ^[[:space:]]*#if ]]; then
        guards+=("")
      elif [[ $line =~ ^[[:space:]]*#(else|elseif) ]] && ((${#guards[@]} > 0)); then
        guards[-1]=""
      elif [[ $line =~ ^[[:space:]]*#endif ]] && ((${#guards[@]} > 0)); then
        unset 'guards[-1]'
      elif [[ $line =~ ^[[:space:]]*(@[A-Za-z_]+[[:space:]]+)*((public|package|internal|fileprivate|private)[[:space:]]+)?import[[:space:]]+((typealias|struct|class|enum|protocol|let|var|func)[[:space:]]+)?($platform_modules)([.[:space:]]|$) ]]; then
        module=${BASH_REMATCH[6]}
        [[ " ${guards[*]} " == *" $module "* ]] || echo "${file#"$repo"/}:$number: $line"
      fi
    done <"$file"
  done < <(find "$repo/Sources/AmodbModels" "$repo/Sources/AmodbClient" -name '*.swift' -print0 | sort -z)
}
unguarded=$(unguarded_imports)
if [[ -z $unguarded ]]; then
  ok "AmodbModels and AmodbClient import no platform module outside #if canImport of it"
else
  not_ok "AmodbModels and AmodbClient import no platform module outside #if canImport of it:"
  sed 's/^/#   /' <<<"$unguarded"
fi

# --- 2. a tagged clone, and the consumer built against it ---------------------------------
# The clone's directory name is the package identity the consumer names (`package: "amodb-proxy"`).
clone="$work/amodb-proxy"
git clone -q "$repo" "$clone"
# The working tree as it is: changed and new files over the clone, deleted ones removed.
(cd "$repo" && git ls-files -z --modified --others --exclude-standard \
  | while IFS= read -r -d '' file; do if [[ -e $file ]]; then printf '%s\0' "$file"; fi; done \
  | tar --null -T - -cf -) | tar -C "$clone" -xf -
(cd "$repo" && git ls-files -z --deleted) | (cd "$clone" && xargs -0 -r rm -f --)
git -C "$clone" add -A
git_identity=(-c user.name=consumer-check -c user.email=consumer-check@localhost -c commit.gpgsign=false -c tag.gpgsign=false)
git -C "$clone" diff --cached --quiet \
  || git "${git_identity[@]}" -C "$clone" commit -q -m "the working tree, for the consumer check"
# Only 1.0.0, so `from: "1.0.0"` cannot pick a later tag of the repository instead.
git -C "$clone" tag -l | xargs -r git -C "$clone" tag -d >/dev/null
git "${git_identity[@]}" -C "$clone" tag 1.0.0
echo "# $(git -C "$clone" log -1 --format='%h %s') tagged 1.0.0 in $clone"

consumer="$work/consumer"
mkdir -p "$consumer"
cp -R "$consumer_dir/Sources" "$consumer/"
sed "s|@AMODB_PROXY_URL@|file://$clone|" "$consumer_dir/Package.swift.template" >"$consumer/Package.swift"
# Caches of its own: the shared ones would keep a copy of every temporary clone.
swift_options=(--package-path "$consumer" --product AmodbConsumer --disable-dependency-cache --manifest-cache local)
build_start=$(date +%s)
if swift build "${swift_options[@]}" >"$work/build.log" 2>&1; then
  ok "a consumer resolves amodb-proxy from: \"1.0.0\" and builds with AmodbClient and AmodbModels ($(( $(date +%s) - build_start )) s)"
else
  sed 's/^/#   /' "$work/build.log" | tail -n 40
  not_ok "a consumer resolves amodb-proxy from: \"1.0.0\" and builds with AmodbClient and AmodbModels"
  finish
fi
# Nothing but the dependency's two libraries was compiled for it (SwiftPM makes a build
# directory for every target it knows of, but a module only for those it compiles).
built=$(find "$consumer/.build/debug/Modules" -maxdepth 1 -name '*.swiftmodule' -printf '%f\n' | sed 's/\.swiftmodule$//' | sort | tr '\n' ' ')
if [[ $built == "AmodbClient AmodbConsumer AmodbModels " ]]; then
  ok "only AmodbModels and AmodbClient are compiled for it"
else
  not_ok "only AmodbModels and AmodbClient are compiled for it (built: $built)"
fi

# --- 3. the consumer runs ---------------------------------------------------------------
output=$("$consumer/.build/debug/AmodbConsumer" 2>&1) || true
if [[ $output == "AmodbClient(baseURL: https://movies-proxy.example.com/3, bearerToken: <redacted>)" ]]; then
  ok "the consumer makes an AmodbClient: $output"
else
  not_ok "the consumer makes an AmodbClient (printed: ${output:-nothing})"
fi
finish
