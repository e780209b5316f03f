#!/usr/bin/env bash
# Runs the snippets of the README's "Using it from an app" as an app developer would copy
# them, against `amodb-proxy --sandbox` with client tokens on (so a snippet that sends no
# token, or sends it wrong, gets 401 and fails):
#   - each block tagged `<!-- snippet: NAME -->` is read from README.md as it stands; only
#     its placeholders change: https://movies-proxy.example.com/3 becomes the proxy's
#     loopback URL and YOUR_APP_TOKEN the token it was started with (a block without both
#     fails, as it would call some other server);
#   - swift-urlsession and swift-amodbclient become the main.swift of two executables, each
#     built on its own, in a scratch package that depends on this checkout by path (only
#     AmodbModels and AmodbClient are compiled); URLSession lives in FoundationNetworking
#     on Linux, so the first gets `#if canImport(FoundationNetworking) import
#     FoundationNetworking #endif` put before it, which changes nothing on Apple platforms;
#   - kotlin-okhttp runs as its Java twin, Tests/Snippets/TrendingOkHttp.java (no Kotlin
#     compiler here), on Debian's OkHttp and Android's org.json; every string in the Kotlin
#     block must be a string in the twin and every member it names a call there;
#   - js-fetch runs with node as an ES module (top-level await, global fetch);
#   - each must print exactly what the proxy answers, fetched here with curl: the first
#     trending title (AmodbClient: the de-DE one, then the movie's title and poster URL);
#   - the README's claims for TMDB client libraries: the app token is accepted as `api_key`
#     and any other `api_key` alone gets 401 while tokens are set, unknown `append_to_response` names are answered without, /3/configuration
#     is served and cached a day;
#   - every snippet tag in README.md is one this script runs.
#
# Usage: bash Tests/Snippets/run.sh
# Needs swift, curl, python3, node (18 or later), a JDK, and Debian's libokhttp-java and
# libandroid-json-java (`apt-get install libokhttp-java libandroid-json-java`).
# Builds the debug amodb-proxy if it is not up to date; the proxy runs from a temporary
# directory (so no config/amodb-proxy.conf is read) on a port the OS picks, and is stopped
# on exit. Prints `ok - …` / `not ok - …`, then `N passed, N failed`; exits 1 if a check
# failed, 2 if the setup failed.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=Tests/lib/checks.sh
source "$script_dir/../lib/checks.sh"
enter_repo
readme="$repo/README.md"

begin_checks

okhttp_jars=(/usr/share/java/okhttp.jar /usr/share/java/okio.jar /usr/share/java/com.android.json.jar)
require_tools curl python3 node javac java
for jar in "${okhttp_jars[@]}"; do
  [[ -f $jar ]] || setup_failed "$jar exists (apt-get install libokhttp-java libandroid-json-java)"
done
classpath=$(IFS=:; echo "${okhttp_jars[*]}")

# --- the blocks, as README.md shows them ------------------------------------------------
placeholder_url="https://movies-proxy.example.com/3"
placeholder_token="YOUR_APP_TOKEN"
token="snippets-$RANDOM$RANDOM$RANDOM"
runs=(swift-urlsession swift-amodbclient kotlin-okhttp js-fetch)

# readme_block NAME: the fenced block right after `<!-- snippet: NAME -->`, without its fences.
readme_block() {
  awk -v tag="<!-- snippet: $1 -->" '
    state == 0 && $0 == tag { state = 1; next }
    state == 1 { if ($0 ~ /^```/) { state = 2; next } exit }
    state == 2 { if ($0 ~ /^```[[:space:]]*$/) { closed = 1; exit } print }
    END { if (!closed) exit 1 }
  ' "$readme"
}

tags=$(grep -o '^<!-- snippet: [a-z0-9-]* -->$' "$readme" | sed 's/^<!-- snippet: //; s/ -->$//' | sort)
if [[ $tags == "$(printf '%s\n' "${runs[@]}" | sort)" ]]; then
  ok "README.md tags exactly the snippets this script runs: ${runs[*]}"
else
  not_ok "README.md's snippet tags ($(echo $tags)) are the ones this script runs (${runs[*]})"
fi

declare -A block
for name in "${runs[@]}"; do
  if text=$(readme_block "$name") && [[ -n $text ]]; then
    block[$name]=$text
  else
    setup_failed "README.md has a fenced block right after <!-- snippet: $name -->"
  fi
done

# with_proxy TEXT: TEXT calling the proxy started below; fails unless TEXT holds both placeholders.
with_proxy() {
  [[ $1 == *"$placeholder_url"* && $1 == *"$placeholder_token"* ]] || return 1
  local text=${1//"$placeholder_url"/"$base"}
  printf '%s\n' "${text//"$placeholder_token"/"$token"}"
}

# --- the proxy: sandbox mode, client tokens on ------------------------------------------
build_debug_proxy
# --sandbox replaces the upstream and the key with the built-in stand-in; the client tokens
# stay in force.
start_sandboxed_proxy AMODB_PROXY_TOKENS="$token"
base="http://127.0.0.1:$proxy_port/3"
echo "# amodb-proxy --sandbox on 127.0.0.1:$proxy_port"

# get PATH_AND_QUERY [curl options…]: the body of a call with the token, into $work/body.
get() {
  local path=$1
  shift
  curl -sS -o "$work/body" -w '%{http_code}' -H "Authorization: Bearer $token" "$@" "$base$path"
}
# json EXPRESSION: EXPRESSION over the JSON body `j` of the last get.
json() { python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$work/body" "$1"; }

# What the snippets must print, as the proxy answers it.
[[ $(get /trending/movie/week) == 200 ]] || setup_failed "the proxy answers /3/trending/movie/week with the token"
title=$(json 'j["results"][0]["title"]')
[[ $(get '/trending/movie/week?language=de-DE') == 200 ]] || setup_failed "the proxy answers /3/trending/movie/week?language=de-DE"
title_de=$(json 'j["results"][0]["title"]')
[[ $(get '/movie/550?append_to_response=credits,ratings') == 200 ]] || setup_failed "the proxy answers /3/movie/550"
movie_line=$(json 'j["title"]')
poster=$(json 'j.get("poster_path") or ""')
[[ $(get /configuration -D "$work/configuration.head") == 200 ]] || setup_failed "the proxy answers /3/configuration"
movie_line="$movie_line $(json 'j["images"]["secure_base_url"]')w500$poster"
echo "# expected: '$title'; AmodbClient: '$title_de' / '$movie_line'"

# run_snippet NAME EXPECTED COMMAND…: the snippet ran, exited 0, and printed exactly EXPECTED.
run_snippet() {
  local name=$1 expected=$2
  shift 2
  if timeout 60 "$@" >"$work/$name.out" 2>"$work/$name.err" && [[ $(cat "$work/$name.out") == "$expected" ]]; then
    ok "$name prints '${expected//$'\n'/ | }'"
  else
    not_ok "$name prints '${expected//$'\n'/ | }'"
    cat "$work/$name.out" "$work/$name.err" | tail -n 15 | sed 's/^/#   /'
  fi
}

# --- Swift: URLSession and AmodbClient ----------------------------------------------------
# A scratch package depending on this checkout by path; the path's last component is the
# package identity the snippet's comment names (`"amodb-proxy"`).
package="$work/snippets"
ln -s "$repo" "$work/amodb-proxy"
for product in URLSessionSnippet AmodbClientSnippet; do
  # Empty until run_swift writes it: SwiftPM wants a source in every target to load the package.
  mkdir -p "$package/Sources/$product" && : >"$package/Sources/$product/main.swift"
done
cat >"$package/Package.swift" <<'EOF'
// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "snippets",
    platforms: [.macOS(.v13), .iOS(.v16)],
    dependencies: [.package(path: "../amodb-proxy")],
    targets: [
        .executableTarget(name: "URLSessionSnippet"),
        .executableTarget(name: "AmodbClientSnippet", dependencies: [.product(name: "AmodbClient", package: "amodb-proxy")]),
    ],
    swiftLanguageModes: [.v6]
)
EOF
# run_swift NAME PRODUCT EXPECTED [PREAMBLE]: the block NAME, after PREAMBLE, as PRODUCT's main.swift.
run_swift() {
  local name=$1 product=$2 expected=$3 preamble=${4:-}
  if ! { printf '%s' "$preamble"; with_proxy "${block[$name]}"; } >"$package/Sources/$product/main.swift"; then
    not_ok "$name uses $placeholder_url and $placeholder_token"
  elif ! (cd "$package" && swift build --product "$product") >"$work/$name-build.log" 2>&1; then
    not_ok "$name compiles"
    grep -E '^/.*error:' "$work/$name-build.log" | sort -u | head -n 10 | sed 's/^/#   /'
  else
    run_snippet "$name" "$expected" "$(cd "$package" && swift build --show-bin-path)/$product"
  fi
}
echo "# swift build (the Swift snippets, AmodbModels and AmodbClient)"
run_swift swift-urlsession URLSessionSnippet "$title" $'#if canImport(FoundationNetworking)\nimport FoundationNetworking\n#endif\n'
run_swift swift-amodbclient AmodbClientSnippet "$title_de"$'\n'"$movie_line"

# --- Kotlin (as its Java twin): OkHttp --------------------------------------------------------
twin="$script_dir/TrendingOkHttp.java"
printf '%s\n' "${block[kotlin-okhttp]}" >"$work/kotlin-okhttp.kt"
if python3 - "$work/kotlin-okhttp.kt" "$twin" >"$work/twin.log" <<'EOF'; then
import re, sys

def scan(source):
    """Splits code into (code without strings and comments, string literals)."""
    code, literals, i = [], [], 0
    while i < len(source):
        if source.startswith("//", i):
            i = source.find("\n", i)
            i = len(source) if i < 0 else i
        elif source[i] == '"':
            j = i + 1
            while source[j] != '"':
                j += 2 if source[j] == "\\" else 1
            literals.append(source[i + 1:j])
            i = j + 1
        else:
            code.append(source[i])
            i += 1
    return "".join(code), literals

kotlin_code, kotlin_literals = scan(open(sys.argv[1]).read())
java_code, java_literals = scan(open(sys.argv[2]).read())
template = re.compile(r"\$\{([^}]*)\}|\$([A-Za-z_]\w*)")
problems = []
for literal in kotlin_literals:
    kotlin_code += " " + " ".join(m.group(1) or "" for m in template.finditer(literal))
    for fragment in template.split(literal)[::3]:
        if fragment and fragment not in java_literals:
            problems.append(f'the Kotlin string "{fragment}" is no string of the twin')
for member in sorted(set(re.findall(r"\.([A-Za-z_]\w*)", kotlin_code))):
    java_form = "try (" if member == "use" else f".{member}("
    if java_form not in java_code:
        problems.append(f"the Kotlin names .{member}, the twin has no {java_form}")
print("\n".join(problems))
sys.exit(1 if problems else 0)
EOF
  ok "kotlin-okhttp: TrendingOkHttp.java is its twin (the same strings, the same members called)"
else
  not_ok "kotlin-okhttp: TrendingOkHttp.java is its twin"
  sed 's/^/#   /' "$work/twin.log"
fi
mkdir -p "$work/java"
if with_proxy "$(cat "$twin")" >"$work/java/TrendingOkHttp.java"; then
  if javac -d "$work/java" -cp "$classpath" "$work/java/TrendingOkHttp.java" >"$work/javac.log" 2>&1; then
    run_snippet kotlin-okhttp "$title" java -cp "$classpath:$work/java" TrendingOkHttp
  else
    not_ok "TrendingOkHttp.java compiles against $classpath"
    indented "$work/javac.log"
  fi
else
  not_ok "TrendingOkHttp.java uses $placeholder_url and $placeholder_token"
fi

# --- JavaScript: fetch ---------------------------------------------------------------------
if with_proxy "${block[js-fetch]}" >"$work/fetch.mjs"; then
  run_snippet js-fetch "$title" node "$work/fetch.mjs"
else
  not_ok "js-fetch uses $placeholder_url and $placeholder_token"
fi

# --- what the README tells TMDB client libraries ---------------------------------------------
# The api_key checks ask for a path already cached: each client's share of amodb's calls is
# 5 of the default limit's 40, and the snippets, /3/configuration and the append_to_response
# check below are the misses this client has.
status=$(curl -sS -o "$work/body" -w '%{http_code}' "$base/trending/movie/week?api_key=$token" || true)
if [[ $status == 200 ]]; then
  ok "a library that can only send an api_key is served when that key is the app token"
else
  not_ok "the app token as api_key alone is accepted (got $status: $(head -c 300 "$work/body"))"
fi
status=$(curl -sS -o "$work/body" -w '%{http_code}' "$base/trending/movie/week?api_key=not-$token" || true)
if [[ $status == 401 ]] && grep -q '"status_message"' "$work/body"; then
  ok "an api_key that is no app token gets 401 JSON while tokens are set"
else
  not_ok "an api_key that is no app token gets 401 JSON (got $status)"
fi
status=$(get "/movie/550?append_to_response=credits,trailers,casts&api_key=$token")
if [[ $status == 200 ]] && [[ $(json '" ".join(sorted(k for k in ("credits", "trailers", "casts") if k in j))') == credits ]]; then
  ok "append_to_response=credits,trailers,casts (and an api_key beside the Bearer) answers credits, without trailers or casts"
else
  not_ok "append_to_response keeps credits and drops trailers and casts (status $status: $(head -c 300 "$work/body"))"
fi
# The first answer was fetched above: fresh for a day; the next one comes from the cache.
cache_control=$(tr -d '\r' <"$work/configuration.head" | grep -i '^cache-control:' || true)
cache_status=$(curl -sS -o /dev/null -D - -H "Authorization: Bearer $token" "$base/configuration" | tr -d '\r' | grep -i '^cache-status:' || true)
if [[ ${cache_control,,} == "cache-control: public, max-age=86400" && ${cache_status,,} == "cache-status: amodb-proxy; hit"* ]]; then
  ok "/3/configuration is served and cached a day ($cache_control; then $cache_status)"
else
  not_ok "/3/configuration is cached a day (${cache_control:-no Cache-Control}; then ${cache_status:-no Cache-Status})"
fi

finish
