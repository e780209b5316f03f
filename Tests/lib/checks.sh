# shellcheck shell=bash
# What the shell checks under Tests/ share (Browser/run.sh, Browser/status.sh, Snippets/run.sh,
# HTTPS/run.sh), so that each script holds only its own checks. A script sources it after
# `set -euo pipefail`:
#
#   script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
#   source "$script_dir/../lib/checks.sh"
#
# Sourcing it defines the functions and variables below and does nothing else: no trap, no
# directory, no output, no change of directory or options until a function is called.
#
# The checks' lines and counts (the format .ci/run's log shows):
#   passed, failed             the counts so far
#   ok MESSAGE                 prints `ok - MESSAGE` and counts a pass
#   not_ok MESSAGE             prints `not ok - MESSAGE` and counts a failure
#   count_checks TEXT          prints TEXT's lines, counting its `ok - …` and `not ok - …` ones
#                              (the checks a Python script made and printed)
#   setup_failed MESSAGE       the checks cannot run at all: its `not ok` line, the counts, exit 2
#   finish                     prints `N passed, N failed`; exits 1 if a check failed, else 0
#   indented FILE [LINES]      the last LINES (15) lines of a log, as `#   ` comments
#   require_tools TOOL…        setup_failed "TOOL is installed" for the first one not on PATH
# The run's setting:
#   enter_repo                 repo= the checkout's root, and cd there; swift on PATH
#                              (/opt/swift/usr/bin where it is not)
#   begin_checks               work= a new temporary directory, started= now, elapsed prints
#                              the seconds since; on exit (INT 130, TERM 143) the processes
#                              named to stop_on_exit are stopped and $work is removed
#   stop_on_exit PID…          stop these on exit
#   stop PID                   stop one now (kill, then wait), and not again on exit
#   port_in_output PID FILE PATTERN [LINES_WITH]
#                              the port a server started in the background logs once it listens
# The sandboxed proxy:
#   build_debug_proxy          binary= the debug amodb-proxy, built if not up to date
#   start_sandboxed_proxy [NAME=VALUE…]
#                              $binary --sandbox on 127.0.0.1 and a port the OS picks: sets
#                              proxy_pid and proxy_port; its stdout (the access log) in
#                              $work/proxy.out, its JSON events in $work/proxy.err
# Chromium:
#   find_chromium              chromium= $CHROMIUM, or the first Chromium or Chrome on PATH
#   headless_chromium NAME ARGUMENT…
#                              one headless run with a profile of its own, stderr in $work/NAME.err
#   chromium_output NAME…      what those runs printed, as comments (for a failure)

passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok - $*"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $*"; }

# count_checks TEXT: prints TEXT, counting each `ok - …` line as a pass and each `not ok - …`
# line as a failure; other lines (`#   saw: …`) are printed as they are.
count_checks() {
  local line
  while IFS= read -r line; do
    case $line in
      "ok - "*) ok "${line#ok - }" ;;
      "not ok - "*) not_ok "${line#not ok - }" ;;
      *) echo "$line" ;;
    esac
  done <<<"$1"
}

# setup_failed MESSAGE: the checks cannot run at all. Called from the script itself, not from
# a $(…): it must end the script.
setup_failed() {
  echo "not ok - $*"
  echo "$passed passed, $((failed + 1)) failed"
  exit 2
}

# finish: the last line, `N passed, N failed`, and the exit status: 1 if a check failed.
finish() {
  echo "$passed passed, $failed failed"
  ((failed == 0)) || exit 1
  exit 0
}

# indented FILE [LINES]: the last lines of a log, as comments.
indented() { tail -n "${2:-15}" "$1" | sed 's/^/#   /'; }

# require_tools TOOL…: each TOOL is a command on PATH, or the setup failed.
require_tools() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || setup_failed "$tool is installed"
  done
}

# enter_repo: repo= the root of the checkout this file is in; the script runs from there.
enter_repo() {
  repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  cd "$repo" || exit 2
  command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH
}

stopped_on_exit=()
# stop_on_exit PID…: processes started in the background, stopped when the script exits.
stop_on_exit() { stopped_on_exit+=("$@"); }

# stop PID: stops it now (and waits for it), and drops it from those stopped on exit.
stop() {
  local pid=$1 kept=() other
  [[ -n $pid ]] || return 0
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  for other in "${stopped_on_exit[@]}"; do
    [[ $other == "$pid" ]] || kept+=("$other")
  done
  stopped_on_exit=("${kept[@]}")
}

# The EXIT trap of begin_checks: all are signalled first, then waited for; the script's own
# exit status is kept.
checks_cleanup() {
  local status=$? pid
  for pid in "${stopped_on_exit[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${stopped_on_exit[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "${work:-}"
  exit "$status"
}

# begin_checks: the traps first, so that $work is removed however the script ends.
begin_checks() {
  trap checks_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  work=$(mktemp -d)
  started=$(date +%s)
}

# elapsed: whole seconds since begin_checks.
elapsed() { echo $(($(date +%s) - started)); }

# port_in_output PID FILE PATTERN [LINES_WITH]: the port a server started in the background
# (PID) writes to FILE once it listens: the digits that end the first match of the grep regex
# PATTERN, on the lines holding the fixed string LINES_WITH if it is given. Looks every 0.1 s
# for 10 s, while PID runs; prints nothing if the port never shows.
port_in_output() {
  local pid=$1 file=$2 pattern=$3 lines_with=${4:-} port="" i
  for ((i = 0; i < 100; i++)); do
    port=$(grep -F -- "$lines_with" "$file" 2>/dev/null | grep -o -- "$pattern" | head -n 1 | grep -o '[0-9]*$' || true)
    [[ -n $port ]] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "$port"
}

# build_debug_proxy: binary= the debug amodb-proxy (`swift build` only links it again if a
# source changed); the build's log is in $work/build.log.
build_debug_proxy() {
  echo "# swift build --product amodb-proxy"
  swift build --product amodb-proxy >"$work/build.log" 2>&1 || {
    indented "$work/build.log" 30
    setup_failed "swift build --product amodb-proxy"
  }
  binary="$(swift build --show-bin-path)/amodb-proxy"
}

# start_sandboxed_proxy [NAME=VALUE…]: `$binary --sandbox` (the built-in stand-in for the
# upstream and its key) with these settings, on 127.0.0.1 and a port the OS picks, logging
# JSON. From $work, so no config/amodb-proxy.conf is read. Sets proxy_pid (stopped on exit)
# and proxy_port, or the setup failed.
start_sandboxed_proxy() {
  (cd "$work" && exec env HOST=127.0.0.1 PORT=0 AMODB_LOG_FORMAT=json "$@" \
    "$binary" --sandbox >"$work/proxy.out" 2>"$work/proxy.err") &
  proxy_pid=$!
  stop_on_exit "$proxy_pid"
  proxy_port=$(port_in_output "$proxy_pid" "$work/proxy.err" '"address":"http://127\.0\.0\.1:[0-9]*' '"amodb-proxy listening"')
  [[ -n $proxy_port ]] || {
    indented "$work/proxy.err"
    setup_failed "amodb-proxy --sandbox starts and logs its port"
  }
}

# find_chromium: chromium= $CHROMIUM if set, else the first of chromium, chromium-browser and
# google-chrome on PATH; the setup failed if there is none.
find_chromium() {
  local candidate
  chromium=${CHROMIUM:-}
  if [[ -z $chromium ]]; then
    for candidate in chromium chromium-browser google-chrome; do
      if command -v "$candidate" >/dev/null; then chromium=$(command -v "$candidate"); break; fi
    done
  fi
  [[ -n $chromium ]] || setup_failed "Chromium is installed (apt-get install chromium)"
}

# headless_chromium NAME ARGUMENT…: one run of $chromium, headless, with ARGUMENTs (the page
# and what to do with it). A profile of its own per run ($work/profile-NAME): nothing cached
# from the run before, nothing shared with anyone else's Chromium. Its standard error goes to
# $work/NAME.err, its standard output to the caller's; `timeout` bounds the whole run to 90 s.
# Its exit status is not looked at: the checks read what it wrote.
headless_chromium() {
  local name=$1
  shift
  timeout 90 "$chromium" --headless=new --disable-gpu --no-sandbox --no-first-run --no-default-browser-check \
    --disable-extensions --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/profile-$name" "$@" 2>"$work/$name.err" || true
}

# chromium_output NAME…: the last lines each headless_chromium run NAME printed, without its
# D-Bus complaints, as comments.
chromium_output() {
  local name
  for name in "$@"; do
    echo "# Chromium's output ($name), without its D-Bus complaints:"
    grep -v 'dbus/' "$work/$name.err" | tail -n 10 | sed 's/^/#   /' || true
  done
}
