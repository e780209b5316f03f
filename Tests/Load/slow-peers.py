#!/usr/bin/env python3
"""Load and robustness checks for amodb-proxy: what the server survives, measured.

    python3 Tests/Load/slow-peers.py [--binary PATH] [--only s2,s5]

Starts the release binary (default .build/release/amodb-proxy) on 127.0.0.1 with a
port of its choosing (PORT=0, read back from its "amodb-proxy listening" log line) and:

  s1  starts it with --sandbox, AMODB_HEAD_TIMEOUT=5, AMODB_IDLE_TIMEOUT=30
  s2  1,000 slowloris peers (a partial head, then one byte a second) and 1,000 idle
      keep-alive peers, all open at once, while a normal client (a separate process)
      makes 200 sequential requests to a cached path: its latency; every slowloris
      peer answered 408 / closed by HEAD_TIMEOUT however it trickles
  s3  5,000 concurrent keep-alive connections, 2 requests each
  s4  AMODB_MAX_CONNECTIONS=100, all busy (a request held by the slow stand-in upstream): the
      101st connection gets 503 + close; once answered and idle, room again after 50 leave,
      and at the cap a newcomer takes the longest-idle connection's place
  s5  RLIMIT_NOFILE 128 (soft and hard) and 200 connections: no busy loop while out of
      descriptors (EMFILE), served again once they are gone
  s6  SIGTERM with idle connections and a request in flight (held by a slow stand-in
      upstream in this script): idle ones closed, the request answered, exit 0 within
      the grace period; then a request held past the grace period: cut, exit 0 on time
  s7  2,000 clients each pipelining 64 GETs of the ~10 KB cached page and reading nothing:
      the resident size grows by under 64 KiB per client (unsent output bounded, bodies
      referenced, not copied), and is back near its baseline (+16 MB) once they close

Python standard library only, loopback only. Every loop is bounded in count and time,
the whole run by a watchdog; each server started here is killed on the way out.
Prints `ok - ...` / `not ok - ...` per check with the figures measured, then
`N passed, N failed`; exits 1 if any check failed, 2 if it could not run at all.

The connection counts above are the test: when the descriptor limit cannot be raised
high enough for them, the run stops with exit 2 and says so (run.sh raises it with
`ulimit -n`). `--scale-down` runs fewer connections instead, on a developer machine,
and says SCALED DOWN at the start and the end. `--only` with an unknown scenario is an
error. The checks assert what the server does (answered, cut, refused, recovered),
each with a generous time bound that only a defect crosses; latency and CPU figures
are reported, not asserted: speed lives in the benchmark (../shared/bench).
"""

import argparse
import asyncio
import ctypes
import json
import os
import random
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

LOOPBACK = "127.0.0.1"
HEAD_TIMEOUT = 5.0          # AMODB_HEAD_TIMEOUT for s1-s3
IDLE_TIMEOUT = 30.0         # AMODB_IDLE_TIMEOUT for s1-s3
HEAD_SLACK = 3.0            # a slowloris peer must be cut by HEAD_TIMEOUT + this
SLOWEST_ANSWER_MS = 5000.0  # s2: a normal client's request answered within this, or it was not served
RECOVERY_S = 5.0            # s5: served again within this once descriptors are free
SHUTDOWN_SLACK = 3.0        # s6: idle connections closed, and exit, within this (past the grace period)
SCENARIOS = ("s1", "s2", "s3", "s4", "s5", "s6", "s7")
RUN_LIMIT = int(os.environ.get("SLOW_PEERS_RUN_LIMIT", "300"))   # watchdog for the whole run, seconds
CACHED_PATH = "/3/trending/movie/week"
MOVIE_PATH = "/3/movie/550"

PLAN = {"slowloris": 1000, "idle": 1000, "normal": 200, "burst": 5000, "cap": 100, "emfile_conns": 200, "nonreaders": 2000}
EMFILE_NOFILE = 128

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIVE_SERVERS = []
RESULTS = {"passed": 0, "failed": 0}
FAILED_LOGS = []
STATE = {"movie_body": None, "scaled": None}


def now():
    return time.monotonic()


def say(text):
    print(text, flush=True)


def check(ok, label, detail="", server=None):
    RESULTS["passed" if ok else "failed"] += 1
    say(f"{'ok' if ok else 'not ok'} - {label}" + (f" ({detail})" if detail else ""))
    if not ok and server is not None and server not in FAILED_LOGS:
        FAILED_LOGS.append(server)
    return ok


def percentile(values, fraction):
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, int(round(fraction * (len(ordered) - 1)))))
    return ordered[index]


def request_bytes(path, keep_alive=True):
    connection = "keep-alive" if keep_alive else "close"
    return f"GET {path} HTTP/1.1\r\nHost: {LOOPBACK}\r\nUser-Agent: slow-peers\r\nConnection: {connection}\r\n\r\n".encode()


# ---------------------------------------------------------------------------------------
# The server under test

class StartupError(Exception):
    pass


class Server:
    """One amodb-proxy process; its stdout and stderr go to a file (a pipe could fill up)."""

    def __init__(self, name, binary, workdir, env=None, args=(), nofile=None):
        self.name = name
        self.binary = binary
        self.workdir = workdir
        self.extra_env = dict(env or {})
        self.args = list(args)
        self.nofile = nofile
        self.proc = None
        self.port = None
        self.log_path = os.path.join(workdir, f"{name}.log")

    def start(self, timeout=20.0):
        environment = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "HOST": LOOPBACK,
            "PORT": "0",
            "AMODB_CONFIG": "/dev/null",   # no config/amodb-proxy.conf, whatever the directory
            "AMODB_LOG_LEVEL": "info",
        }
        environment.update(self.extra_env)
        limit = self.nofile

        def in_child():
            # Dies with this script even if it is SIGKILLed (Linux PR_SET_PDEATHSIG = 1).
            try:
                ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
            except (OSError, AttributeError):
                pass
            if limit:
                resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

        log = open(self.log_path, "wb")
        try:
            self.proc = subprocess.Popen(
                [self.binary, *self.args], env=environment, cwd=self.workdir, stdin=subprocess.DEVNULL,
                stdout=log, stderr=subprocess.STDOUT, preexec_fn=in_child)
        finally:
            log.close()
        LIVE_SERVERS.append(self)
        deadline = now() + timeout
        while now() < deadline:
            self.port = self._listening_port()
            if self.port:
                return self.port
            if self.proc.poll() is not None:
                raise StartupError(f"{self.name} exited with {self.proc.returncode} before listening:\n{self.tail()}")
            time.sleep(0.02)
        raise StartupError(f"{self.name} did not log 'amodb-proxy listening' within {timeout:.0f}s:\n{self.tail()}")

    def _listening_port(self):
        try:
            with open(self.log_path, "rb") as handle:
                lines = handle.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return None
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict) and entry.get("message") == "amodb-proxy listening":
                address = entry.get("address", "")
                return int(address.rsplit(":", 1)[1])
        return None

    @property
    def pid(self):
        return self.proc.pid

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def fd_count(self):
        try:
            return len(os.listdir(f"/proc/{self.pid}/fd"))
        except OSError:
            return -1

    def cpu_ticks(self):
        with open(f"/proc/{self.pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])   # utime + stime (fields 14 and 15)

    def soft_nofile(self):
        try:
            with open(f"/proc/{self.pid}/limits") as handle:
                for line in handle:
                    if line.startswith("Max open files"):
                        return int(line.split()[3])
        except (OSError, ValueError, IndexError):
            pass
        return -1

    def wait_exit(self, timeout):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self):
        """SIGTERM, then SIGKILL after 5 s; always reaps the process."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGTERM)
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
            except OSError:
                pass
        if self in LIVE_SERVERS:
            LIVE_SERVERS.remove(self)

    def tail(self, lines=25):
        try:
            with open(self.log_path, "rb") as handle:
                text = handle.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return "(no log)"
        return "\n".join("    " + line for line in text[-lines:])


def kill_all_servers():
    for server in list(LIVE_SERVERS):
        try:
            if server.proc is not None and server.proc.poll() is None:
                server.proc.kill()
                server.proc.wait(timeout=5)
        except Exception:   # noqa: BLE001 - best effort on the way out
            pass
        if server in LIVE_SERVERS:
            LIVE_SERVERS.remove(server)


# ---------------------------------------------------------------------------------------
# HTTP over asyncio streams and over blocking sockets

async def connect(port, timeout=10.0):
    return await asyncio.wait_for(asyncio.open_connection(LOOPBACK, port), timeout)


def parse_head(head):
    """(status, lower-cased headers) of a response head."""
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    return status, headers


async def read_response(reader, timeout=10.0):
    """(status, lower-cased headers, body); raises on EOF, timeout or garbage."""
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
    status, headers = parse_head(head)
    length = int(headers.get("content-length", "0"))
    body = await asyncio.wait_for(reader.readexactly(length), timeout) if length else b""
    return status, headers, body


async def exchange(reader, writer, path, timeout=10.0, keep_alive=True):
    writer.write(request_bytes(path, keep_alive))
    await asyncio.wait_for(writer.drain(), timeout)
    return await read_response(reader, timeout)


async def wait_eof(reader, timeout, writer=None):
    """Seconds until the peer ended the stream (EOF or reset), or None at timeout.
    With `writer`, closes our side at once then, as a well-behaved client does."""
    start = now()
    deadline = start + timeout
    ended = None
    try:
        while now() < deadline:
            data = await asyncio.wait_for(reader.read(65536), max(0.01, deadline - now()))
            if not data:
                ended = now() - start
                break
    except (asyncio.TimeoutError, TimeoutError):
        return None
    except (ConnectionError, OSError):
        ended = now() - start
    if ended is not None and writer is not None:
        close_writer(writer)
    return ended


def shed_probe(port, count):
    """`count` connections that send a request at once and read to the end: what came back
    ('503', ...) and how the connection ended: FIN (clean), RST (reset) or open (timeout)."""
    outcomes = {}
    for _ in range(count):
        data, ending = b"", "open"
        try:
            with socket.create_connection((LOOPBACK, port), timeout=3) as sock:
                sock.sendall(request_bytes("/healthz"))
                deadline = now() + 3
                while now() < deadline:
                    chunk = sock.recv(65536)
                    if not chunk:
                        ending = "FIN"
                        break
                    data += chunk
        except (ConnectionResetError, BrokenPipeError):
            ending = "RST"
        except OSError as error:
            ending = type(error).__name__
        status = data[9:12].decode("latin-1") if data.startswith(b"HTTP/1.1 ") else "no response"
        key = f"{status} then {ending}"
        outcomes[key] = outcomes.get(key, 0) + 1
    return outcomes


def close_writer(writer):
    try:
        writer.close()
    except Exception:   # noqa: BLE001 - already gone
        pass


def blocking_get(port, path, timeout=5.0, keep_alive=False):
    """One request on a fresh connection: (status, headers, body)."""
    with socket.create_connection((LOOPBACK, port), timeout=timeout) as sock:
        sock.settimeout(timeout)
        sock.sendall(request_bytes(path, keep_alive))
        return read_blocking_response(sock, now() + timeout)


def read_blocking_response(sock, deadline):
    data = b""
    while b"\r\n\r\n" not in data:
        if now() > deadline:
            raise TimeoutError("response head")
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"EOF after {len(data)} bytes")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status, headers = parse_head(head)
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        if now() > deadline:
            raise TimeoutError("response body")
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("EOF in body")
        body += chunk
    return status, headers, body[:length]


def get_until_ok(port, path, attempts=20, pause=0.25):
    """Retries a GET (the cache may need a moment); returns (status, body)."""
    status, body = None, b""
    for _ in range(attempts):
        try:
            status, _, body = blocking_get(port, path)
            if status == 200:
                break
        except (OSError, ValueError) as error:
            status, body = repr(error), b""
        time.sleep(pause)
    return status, body


def latency_client_main(port, path, count, interval):
    """Runs in a separate process (no GIL shared with the load): `count` sequential requests,
    each on a fresh connection, timed from connect to the last body byte. Prints JSON."""
    latencies, failures = [], []
    stop_at = now() + 60
    for index in range(count):
        if now() > stop_at:
            failures.append(f"#{index}: out of time")
            break
        start = time.perf_counter()
        try:
            status, _, _ = blocking_get(port, path, timeout=5.0)
            elapsed = (time.perf_counter() - start) * 1000
            if status == 200:
                latencies.append(elapsed)
            else:
                failures.append(f"#{index}: status {status}")
        except (OSError, ValueError) as error:
            failures.append(f"#{index}: {error!r}")
        time.sleep(interval)
    print(json.dumps({"latencies_ms": latencies, "failures": failures}))


# ---------------------------------------------------------------------------------------
# s1: start

def scenario_start(binary, workdir):
    say("# s1: start amodb-proxy --sandbox (AMODB_HEAD_TIMEOUT=5, AMODB_IDLE_TIMEOUT=30, PORT=0)")
    server = Server("s1-sandbox", binary, workdir, args=["--sandbox"], env={
        "AMODB_HEAD_TIMEOUT": str(HEAD_TIMEOUT), "AMODB_IDLE_TIMEOUT": str(IDLE_TIMEOUT)})
    started = now()
    try:
        port = server.start()
    except StartupError as error:
        check(False, "s1: server starts and logs its address", str(error))
        return None
    check(True, "s1: server starts and logs its address", f"port {port}, {(now() - started) * 1000:.0f} ms, pid {server.pid}")
    status, _ = get_until_ok(port, "/healthz", attempts=10, pause=0.1)
    check(status == 200, "s1: /healthz answers 200", f"status {status}", server)
    status, body = get_until_ok(port, CACHED_PATH)
    check(status == 200, f"s1: warm the cache: {CACHED_PATH} answers 200", f"status {status}, {len(body)} bytes", server)
    status, body = get_until_ok(port, MOVIE_PATH)
    if status == 200:
        STATE["movie_body"] = body   # s6's stand-in upstream serves it back
    say(f"# s1: {MOVIE_PATH} -> {status} ({len(body)} bytes); server fds: {server.fd_count()}, "
        f"its RLIMIT_NOFILE soft limit: {server.soft_nofile()}")
    return server


# ---------------------------------------------------------------------------------------
# s2: slowloris + idle + a normal client

PARTIAL_HEAD = f"GET {MOVIE_PATH} HTTP/1.1\r\nHost: x\r\nX-a: ".encode()


async def slowloris_peer(port, cap):
    """A partial head, then a byte about every second until the server answers/closes."""
    result = {"outcome": "connect-failed", "elapsed": None, "bytes_trickled": 0}
    try:
        reader, writer = await connect(port)
    except (OSError, asyncio.TimeoutError) as error:
        result["error"] = repr(error)
        return result
    received = b""
    start = now()
    try:
        writer.write(PARTIAL_HEAD)
        await writer.drain()
        start = now()
        result["outcome"] = "still-open"
        next_byte = start + random.uniform(0.5, 1.0)   # spread the trickle over the second
        while now() - start < cap:
            wait = max(0.0, min(next_byte, start + cap) - now())
            try:
                data = await asyncio.wait_for(reader.read(4096), wait)
            except (asyncio.TimeoutError, TimeoutError):
                if now() >= next_byte:
                    writer.write(b"a")
                    await writer.drain()
                    result["bytes_trickled"] += 1
                    next_byte += 1.0
                continue
            if data:
                received += data
                if result.get("first_byte") is None:
                    result["first_byte"] = now() - start
                continue
            result["elapsed"] = now() - start
            result["outcome"] = "408" if received.startswith(b"HTTP/1.1 408") else (
                "closed-silently" if not received else "other-response")
            break
    except (ConnectionError, OSError) as error:
        result["elapsed"] = now() - start
        result["outcome"] = "408-then-reset" if received.startswith(b"HTTP/1.1 408") else "reset"
        result["error"] = repr(error)
    finally:
        close_writer(writer)
    result["received"] = received[:40]
    return result


async def idle_peer(port, ready, release):
    """One answered request, then silent until `release`; then checks it still works."""
    result = {"first": None, "second": None}
    try:
        reader, writer = await connect(port)
    except (OSError, asyncio.TimeoutError) as error:
        result["first"] = repr(error)
        ready.set_one()
        return result
    try:
        try:
            status, _, _ = await exchange(reader, writer, CACHED_PATH)
            result["first"] = status
        except (OSError, ValueError, asyncio.TimeoutError, asyncio.IncompleteReadError) as error:
            result["first"] = repr(error)
        ready.set_one()
        await release.wait()
        try:
            status, _, _ = await exchange(reader, writer, CACHED_PATH)
            result["second"] = status
        except (OSError, ValueError, asyncio.TimeoutError, asyncio.IncompleteReadError) as error:
            result["second"] = repr(error)
    finally:
        close_writer(writer)
    return result


class Countdown:
    def __init__(self, count):
        self.left = count
        self.event = asyncio.Event()
        if count <= 0:
            self.event.set()

    def set_one(self):
        self.left -= 1
        if self.left <= 0:
            self.event.set()

    async def wait(self, timeout):
        try:
            await asyncio.wait_for(self.event.wait(), timeout)
            return True
        except (asyncio.TimeoutError, TimeoutError):
            return False


async def scenario_slowloris(server):
    port = server.port
    slow_count, idle_count, normal_count = PLAN["slowloris"], PLAN["idle"], PLAN["normal"]
    say(f"# s2: {slow_count} slowloris + {idle_count} idle keep-alive connections, "
        f"then {normal_count} sequential requests from a separate client process")
    fds_before = server.fd_count()
    release = asyncio.Event()
    ready = Countdown(idle_count)
    opened = now()
    idle_tasks = [asyncio.ensure_future(idle_peer(port, ready, release)) for _ in range(idle_count)]
    all_ready = await ready.wait(30)
    idle_open_s = now() - opened
    slow_started = now()
    cap = HEAD_TIMEOUT + 10
    slow_tasks = [asyncio.ensure_future(slowloris_peer(port, cap)) for _ in range(slow_count)]
    await asyncio.sleep(0.5)   # let the slowloris heads land before timing the normal client
    fds_loaded = server.fd_count()

    interval = 0.012
    process = await asyncio.create_subprocess_exec(
        sys.executable, os.path.abspath(__file__), "--latency-client", str(port), CACHED_PATH, str(normal_count),
        str(interval), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        output, errors = await asyncio.wait_for(process.communicate(), 60)
    except (asyncio.TimeoutError, TimeoutError):
        process.kill()
        output, errors = b"", b"latency client timed out"
        await process.wait()
    normal_done = now() - slow_started

    slow_results = await asyncio.gather(*slow_tasks)
    release.set()
    idle_results = await asyncio.gather(*idle_tasks)

    # The normal client.
    try:
        report = json.loads(output.decode())
    except ValueError:
        report = {"latencies_ms": [], "failures": [f"no report: {errors.decode(errors='replace')[-300:]}"]}
    latencies = report["latencies_ms"]
    failures = report["failures"]
    ok_count = len(latencies)
    p50, p99 = percentile(latencies, 0.50), percentile(latencies, 0.99)
    top = max(latencies) if latencies else float("nan")
    say(f"# s2: all {idle_count} idle peers answered in {idle_open_s:.2f}s; server fds with everything open: "
        f"{fds_loaded} (before: {fds_before}); normal client finished {normal_done:.2f}s after the slowloris start")
    check(all_ready and ok_count == normal_count and not failures,
          f"s2: normal client: {normal_count} requests to {CACHED_PATH} all 200 under load",
          f"{ok_count} ok, {len(failures)} failed" + (f": {failures[:3]}" if failures else ""), server)
    check(ok_count > 0 and top < SLOWEST_ANSWER_MS,
          f"s2: every normal request answered within {SLOWEST_ANSWER_MS / 1000:.0f} s",
          f"max {top:.2f} ms", server)
    say(f"# s2: normal client latency (reported, not asserted): median {p50:.2f} ms, p99 {p99:.2f} ms, "
        f"max {top:.2f} ms, each on a fresh connection")

    # The slowloris peers.
    outcomes = {}
    for result in slow_results:
        outcomes[result["outcome"]] = outcomes.get(result["outcome"], 0) + 1
    cut = [r["elapsed"] for r in slow_results if r["elapsed"] is not None]
    got_408 = outcomes.get("408", 0) + outcomes.get("408-then-reset", 0)
    closed_only = outcomes.get("closed-silently", 0) + outcomes.get("reset", 0)
    trickled = [r["bytes_trickled"] for r in slow_results if r["outcome"] != "connect-failed"]
    early = [t for t in cut if t < HEAD_TIMEOUT - 0.25]
    late = [t for t in cut if t > HEAD_TIMEOUT + HEAD_SLACK]
    detail = (f"408 body then close: {got_408}, closed without a response: {closed_only}, "
              f"other: {sum(outcomes.values()) - got_408 - closed_only} {outcomes}; cut after "
              f"min {min(cut, default=float('nan')):.2f}s / median {statistics.median(cut) if cut else float('nan'):.2f}s / "
              f"max {max(cut, default=float('nan')):.2f}s; bytes trickled per peer up to {max(trickled, default=0)}")
    check(len(cut) == slow_count and not early and not late and outcomes.get("still-open", 0) == 0,
          f"s2: every slowloris peer cut at HEAD_TIMEOUT={HEAD_TIMEOUT:.0f}s (+{HEAD_SLACK}s), trickling does not extend it",
          detail, server)
    check(got_408 == slow_count, "s2: every slowloris peer got the 408 response before the close",
          f"{got_408}/{slow_count}", server)

    # The idle peers: answered once, still open and usable after the storm.
    first_ok = sum(1 for r in idle_results if r["first"] == 200)
    second_ok = sum(1 for r in idle_results if r["second"] == 200)
    errors_seen = sorted({str(r["second"]) for r in idle_results if r["second"] != 200})[:3]
    check(first_ok == idle_count and second_ok == idle_count,
          "s2: idle keep-alive peers stay open and answer again afterwards",
          f"first request 200: {first_ok}/{idle_count}, second request 200: {second_ok}/{idle_count}"
          + (f"; {errors_seen}" if errors_seen else ""), server)
    await settle_fds(server, fds_before, "s2")
    check(server.alive(), "s2: server still running", f"pid {server.pid}", server)


async def settle_fds(server, baseline, label, slack=8, timeout=5.0):
    """The server's descriptors come back to where they were once the peers are gone."""
    deadline = now() + timeout
    count = server.fd_count()
    while now() < deadline and count > baseline + slack:
        await asyncio.sleep(0.1)
        count = server.fd_count()
    check(0 <= count <= baseline + slack, f"{label}: server fds back to baseline once the peers closed",
          f"{count} now, {baseline} before", server)


# ---------------------------------------------------------------------------------------
# s3: many concurrent keep-alive connections

async def scenario_burst(server):
    port = server.port
    count = PLAN["burst"]
    say(f"# s3: {count} concurrent keep-alive connections, 2 requests each on the same connection")
    fds_before = server.fd_count()
    done = Countdown(count)
    release = asyncio.Event()
    peak = {"open": 0, "now": 0}

    async def peer():
        record = {"ok": 0, "error": None, "took": None}
        started = now()
        writer = None
        try:
            reader, writer = await connect(port, timeout=20)
            peak["now"] += 1
            peak["open"] = max(peak["open"], peak["now"])
            for _ in range(2):
                status, headers, _ = await exchange(reader, writer, CACHED_PATH, timeout=20)
                if status != 200:
                    record["error"] = f"status {status}"
                    break
                if headers.get("connection", "").lower() == "close":
                    record["error"] = "server said Connection: close"
                record["ok"] += 1
            record["took"] = now() - started
        except (OSError, ValueError, asyncio.TimeoutError, asyncio.IncompleteReadError) as error:
            record["error"] = repr(error)
        finally:
            done.set_one()
        try:
            await asyncio.wait_for(release.wait(), 60)   # hold it open until all are done
        except (asyncio.TimeoutError, TimeoutError):
            pass
        if writer is not None:
            peak["now"] -= 1
            close_writer(writer)
        return record

    started = now()
    tasks = [asyncio.ensure_future(peer()) for _ in range(count)]
    finished = await done.wait(60)
    total = now() - started
    fds_peak = server.fd_count()
    release.set()
    records = await asyncio.gather(*tasks)
    failures = [r for r in records if r["ok"] != 2 or r["error"]]
    took = [r["took"] for r in records if r["took"] is not None]
    kinds = {}
    for record in failures:
        kinds[str(record["error"])[:60]] = kinds.get(str(record["error"])[:60], 0) + 1
    check(finished and not failures,
          f"s3: {count} connections x 2 requests, all 200",
          f"{2 * count - sum(2 - r['ok'] for r in records)} of {2 * count} responses 200, {len(failures)} failed connections"
          + (f" {dict(list(kinds.items())[:3])}" if kinds else "")
          + f"; total {total:.2f}s ({2 * count / total:.0f} requests/s, bound by this Python client), "
          f"slowest connection {max(took, default=float('nan')):.2f}s; {peak['open']} open at once, server fds {fds_peak}", server)
    await settle_fds(server, fds_before, "s3")
    check(server.alive(), "s3: server still running", f"pid {server.pid}", server)


# ---------------------------------------------------------------------------------------
# s4: the connection cap

async def try_served(port, timeout=3.0):
    """A fresh connection and a /healthz request: (status or error text, reader, writer)."""
    try:
        reader, writer = await connect(port)
    except (OSError, asyncio.TimeoutError) as error:
        return repr(error), None, None
    try:
        status, _, _ = await exchange(reader, writer, "/healthz", timeout=timeout)
        return status, reader, writer
    except (OSError, ValueError, asyncio.TimeoutError, asyncio.IncompleteReadError) as error:
        close_writer(writer)
        return repr(error), None, None


async def scenario_cap(binary, workdir):
    cap = PLAN["cap"]
    say(f"# s4: AMODB_MAX_CONNECTIONS={cap}, every connection busy with a request held upstream")
    # Idle and slow connections make room for newcomers; only busy ones make the server refuse.
    upstream = SlowUpstream(STATE["movie_body"])
    server = Server("s4-cap", binary, workdir, env={
        "AMODB_MAX_CONNECTIONS": str(cap), "AMODB_KEY": "slow-peers-test-key",
        "AMODB_UPSTREAM_URL": f"http://{LOOPBACK}:{upstream.port}/3"})
    writers = []
    loop = asyncio.get_running_loop()
    try:
        port = server.start()
        held = []
        for _ in range(cap):
            try:
                reader, writer = await connect(port)
            except (OSError, asyncio.TimeoutError):
                continue
            writer.write(request_bytes(MOVIE_PATH))
            await writer.drain()
            held.append((reader, writer))
            writers.append(writer)
        waiting = await loop.run_in_executor(None, upstream.got_request.wait, 10)
        check(len(held) == cap and waiting, f"s4: {cap} connections open, each waiting on one held upstream call",
              f"{len(held)}/{cap}, upstream saw {upstream.paths}", server)

        # The 101st, silent: 503 with a JSON error body, then the close.
        started = now()
        detail, ok = "", False
        try:
            reader, writer = await connect(port)
            writers.append(writer)
            status, headers, body = await read_response(reader, timeout=3)
            message = json.loads(body.decode()).get("status_message", "")
            closed = await wait_eof(reader, 3)
            ok = status == 503 and bool(message) and closed is not None
            detail = (f"status {status}, Retry-After {headers.get('retry-after')}, status_message {message!r}, "
                      f"closed {'yes' if closed is not None else 'NO'}, {(now() - started) * 1000:.0f} ms")
        except (OSError, ValueError, asyncio.TimeoutError, asyncio.IncompleteReadError) as error:
            detail = repr(error)
        check(ok, f"s4: connection {cap + 1} gets 503 with a JSON status_message and is closed", detail, server)

        # A realistic client writes its request right after connecting, so the server sheds
        # the connection with the request unread (blocking sockets: no event-loop delay).
        outcomes = await asyncio.get_running_loop().run_in_executor(None, shed_probe, port, 20)
        got = sum(count for key, count in outcomes.items() if key.startswith("503"))
        check(got == 20, "s4: over the cap, clients that send their request at once read the 503",
              f"of 20: {outcomes}", server)
        resets = sum(count for key, count in outcomes.items() if key.endswith("RST"))
        if resets:
            say(f"# note (not counted): {resets} of 20 shed connections ended in a reset (RST) after the 503, not a "
                f"clean close (FIN): the server closes them with the request unread (RFC 9112 section 9.6)")

        # The upstream answers: every held connection gets its answer and is then idle.
        upstream.release.set()
        answered = 0
        for reader, _ in held:
            try:
                status, _, _ = await read_response(reader, timeout=10)
                answered += status == upstream.status
            except (OSError, ValueError, asyncio.TimeoutError, asyncio.IncompleteReadError):
                pass
        check(answered == cap, f"s4: the {cap} held requests answered once the upstream is", f"{answered}/{cap}", server)

        # 50 leave: room again for exactly 50.
        for _, writer in held[:cap // 2]:
            close_writer(writer)
        held = held[cap // 2:]
        started = now()
        first = None
        served = 0
        deadline = now() + 5
        while served < cap // 2 and now() < deadline:
            status, reader, writer = await try_served(port)
            if status == 200:
                served += 1
                writers.append(writer)
                if first is None:
                    first = now() - started
            else:
                await asyncio.sleep(0.05)
        check(served == cap // 2, f"s4: after {cap // 2} close, new connections are served again",
              f"{served}/{cap // 2} served, first after {first * 1000 if first is not None else float('nan'):.0f} ms, "
              f"all after {(now() - started) * 1000:.0f} ms", server)
        # Back at the cap, every connection idle: a newcomer is served in the place of the
        # longest-idle one (among those left from the first 100), which is closed.
        status, _, writer = await try_served(port)
        if writer:
            writers.append(writer)
        ended = await asyncio.gather(*(wait_eof(reader, 2) for reader, _ in held))
        closed = sum(1 for seconds in ended if seconds is not None)
        check(status == 200 and closed == 1,
              f"s4: back at {cap}, all idle: a newcomer is served and one of the longest-idle connections closed",
              f"newcomer got {status}; of the {len(held)} idle since the upstream answered, {closed} closed", server)
        check(server.alive(), "s4: server still running", f"pid {server.pid}", server)
    except StartupError as error:
        check(False, "s4: server starts", str(error))
    finally:
        for writer in writers:
            close_writer(writer)
        server.stop()
        upstream.close()


# ---------------------------------------------------------------------------------------
# s5: out of file descriptors

async def scenario_emfile(binary, workdir):
    count = PLAN["emfile_conns"]
    say(f"# s5: server under RLIMIT_NOFILE={EMFILE_NOFILE} (soft and hard), {count} connections")
    server = Server("s5-emfile", binary, workdir, args=["--sandbox"], nofile=EMFILE_NOFILE,
                    env={"AMODB_HEAD_TIMEOUT": "30", "AMODB_IDLE_TIMEOUT": "60"})
    writers = []
    try:
        port = server.start()
        limit = server.soft_nofile()
        status, _ = await asyncio.get_running_loop().run_in_executor(None, get_until_ok, port, CACHED_PATH)
        baseline = server.fd_count()
        say(f"# s5: server soft limit {limit}, fds at rest {baseline}, cache warm: {status}")
        check(limit == EMFILE_NOFILE, f"s5: the server runs with {EMFILE_NOFILE} descriptors (cannot raise it)",
              f"Max open files {limit}", server)

        async def open_one():
            try:
                reader, writer = await connect(port)
            except (OSError, asyncio.TimeoutError):
                return None
            writers.append(writer)
            writer.write(request_bytes("/healthz"))
            return reader

        readers = [await open_one() for _ in range(count)]
        connected = sum(1 for r in readers if r is not None)

        async def answered_in(reader, timeout):
            try:
                status, _, _ = await read_response(reader, timeout)
                return status == 200
            except (OSError, ValueError, asyncio.TimeoutError, asyncio.IncompleteReadError):
                return False

        results = await asyncio.gather(*(answered_in(r, 2.0) for r in readers if r is not None))
        answered = sum(results)
        pending = connected - answered
        fds = server.fd_count()

        # CPU while out of descriptors, with connections still waiting in the backlog.
        ticks_per_s = os.sysconf("SC_CLK_TCK")
        before_ticks, before = server.cpu_ticks(), now()
        await asyncio.sleep(2.0)
        ticks = server.cpu_ticks() - before_ticks
        used = ticks / ticks_per_s / (now() - before)
        check(pending > 0 and fds >= EMFILE_NOFILE - 4,
              "s5: saturated: the server ran out of descriptors with connections left waiting",
              f"{connected} connected, {answered} answered, {pending} waiting, server fds {fds}/{limit}", server)
        say(f"# s5: CPU while out of descriptors (reported, not asserted; a busy accept loop shows as ~100%): "
            f"{used:.1%} of one core over 2 s: {ticks} ticks of 1/{ticks_per_s} s")

        for writer in writers:
            close_writer(writer)
        writers.clear()
        started = now()
        recovered, outcome = None, None
        deadline = now() + RECOVERY_S + 1
        while now() < deadline:
            status, reader, writer = await try_served(port, timeout=max(0.1, deadline - now()))
            if writer is not None:
                writers.append(writer)
            outcome = status
            if status == 200:
                recovered = now() - started
                break
            await asyncio.sleep(0.05)
        check(recovered is not None and recovered < RECOVERY_S, f"s5: served again within {RECOVERY_S:.0f} s once those connections closed",
              f"first 200 after {recovered * 1000 if recovered is not None else float('nan'):.0f} ms (last outcome {outcome})", server)
        status, _ = await asyncio.get_running_loop().run_in_executor(None, get_until_ok, port, CACHED_PATH, 4, 0.25)
        check(status == 200, f"s5: {CACHED_PATH} served afterwards", f"status {status}", server)
        await settle_fds(server, baseline, "s5")
        check(server.alive(), "s5: server still running", f"pid {server.pid}", server)
    except StartupError as error:
        check(False, "s5: server starts", str(error))
    finally:
        for writer in writers:
            close_writer(writer)
        server.stop()


# ---------------------------------------------------------------------------------------
# s6: graceful shutdown

class SlowUpstream:
    """A stand-in for amodb on loopback that holds every request until `release` is set.
    Threads and blocking sockets, all bounded by timeouts and `stop`."""

    def __init__(self, body):
        self.body = body
        self.status = 200 if body else 404
        self.got_request = threading.Event()
        self.release = threading.Event()
        self.stop_event = threading.Event()
        self.paths = []
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind((LOOPBACK, 0))
        self.listener.listen(16)
        self.listener.settimeout(0.2)
        self.port = self.listener.getsockname()[1]
        self.thread = threading.Thread(target=self._accept_loop, daemon=True)
        self.thread.start()

    def _accept_loop(self):
        deadline = now() + 120
        while not self.stop_event.is_set() and now() < deadline:
            try:
                conn, _ = self.listener.accept()
            except (socket.timeout, TimeoutError):
                continue
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        with conn:
            conn.settimeout(10)
            data = b""
            try:
                while b"\r\n\r\n" not in data and len(data) < 65536:
                    chunk = conn.recv(4096)
                    if not chunk:
                        return
                    data += chunk
            except OSError:
                return
            self.paths.append(data.split(b" ", 2)[1].decode("latin-1") if b" " in data else "?")
            self.got_request.set()
            deadline = now() + 30
            while not self.release.is_set() and not self.stop_event.is_set() and now() < deadline:
                self.release.wait(0.1)
            if not self.release.is_set():
                return
            body = self.body or b'{"success":false,"status_code":34,"status_message":"not found"}'
            reason = "OK" if self.status == 200 else "Not Found"
            head = (f"HTTP/1.1 {self.status} {reason}\r\nContent-Type: application/json;charset=utf-8\r\n"
                    f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
            try:
                conn.sendall(head + body)
            except OSError:
                pass

    def close(self):
        self.stop_event.set()
        self.release.set()
        try:
            self.listener.close()
        except OSError:
            pass
        self.thread.join(timeout=2)


async def scenario_shutdown(binary, workdir):
    grace = 5.0
    idle_count = 5
    say(f"# s6: SIGTERM with {idle_count} idle connections and one request in flight "
        f"(held by a slow stand-in upstream), AMODB_SHUTDOWN_GRACE={grace:.0f}")
    upstream = SlowUpstream(STATE["movie_body"])
    expected = upstream.status
    server = Server("s6-shutdown", binary, workdir, env={
        "AMODB_KEY": "slow-peers-test-key", "AMODB_UPSTREAM_URL": f"http://{LOOPBACK}:{upstream.port}/3",
        "AMODB_SHUTDOWN_GRACE": str(grace), "AMODB_IDLE_TIMEOUT": "30"})
    writers = []
    loop = asyncio.get_running_loop()
    try:
        port = server.start()
        idle = []
        for _ in range(idle_count):
            status, idle_reader, idle_writer = await try_served(port)
            if status == 200:
                idle.append((idle_reader, idle_writer))
                writers.append(idle_writer)
        reader, writer = await connect(port)
        writers.append(writer)
        writer.write(request_bytes(MOVIE_PATH))
        await writer.drain()
        in_flight = asyncio.ensure_future(read_response(reader, timeout=15))
        held = await loop.run_in_executor(None, upstream.got_request.wait, 10)
        check(len(idle) == idle_count and held, "s6: idle connections open and a request held upstream",
              f"{len(idle)} idle, upstream saw {upstream.paths}", server)

        sigterm_at = now()
        server.proc.send_signal(signal.SIGTERM)
        idle_closed = await asyncio.gather(*(wait_eof(r, 3.0, w) for r, w in idle))
        refused = await new_connection_refused(port)
        await asyncio.sleep(max(0.0, 1.0 - (now() - sigterm_at)))
        released_at = now() - sigterm_at
        upstream.release.set()
        status, headers, error = None, {}, None
        try:
            status, headers, _ = await in_flight
        except (OSError, ValueError, asyncio.TimeoutError, asyncio.IncompleteReadError) as failure:
            error = repr(failure)
        answered_at = now() - sigterm_at
        closed_after = await wait_eof(reader, 3.0, writer)
        code = await loop.run_in_executor(None, server.wait_exit, grace + 5)
        exited_at = now() - sigterm_at

        closed = [t for t in idle_closed if t is not None]
        check(len(closed) == len(idle) and max(closed, default=0) < SHUTDOWN_SLACK,
              "s6: idle connections closed promptly after SIGTERM",
              f"{len(closed)}/{len(idle)} closed, slowest {max(closed, default=float('nan')) * 1000:.0f} ms", server)
        check(refused[0], "s6: no new connections accepted after SIGTERM", refused[1], server)
        check(status == expected and headers.get("connection", "").lower() == "close" and closed_after is not None,
              f"s6: the request in flight got its answer ({expected}, Connection: close), then the close",
              f"released upstream at {released_at:.2f}s, answered {status} at {answered_at:.2f}s, "
              f"Connection: {headers.get('connection')}" + (f", error {error}" if error else ""), server)
        check(code == 0 and exited_at <= grace + SHUTDOWN_SLACK, f"s6: exit 0 within the {grace:.0f}s grace period",
              f"exit code {code} at {exited_at:.2f}s after SIGTERM", server)
    except StartupError as error:
        check(False, "s6: server starts", str(error))
    finally:
        for writer in writers:
            close_writer(writer)
        server.stop()
        upstream.close()

    # Past the grace period: the held request is cut and the server still exits 0 on time.
    grace = 1.5
    say(f"# s6b: SIGTERM with a request held past AMODB_SHUTDOWN_GRACE={grace}")
    upstream = SlowUpstream(STATE["movie_body"])
    server = Server("s6b-grace", binary, workdir, env={
        "AMODB_KEY": "slow-peers-test-key", "AMODB_UPSTREAM_URL": f"http://{LOOPBACK}:{upstream.port}/3",
        "AMODB_SHUTDOWN_GRACE": str(grace)})
    writers = []
    try:
        port = server.start()
        reader, writer = await connect(port)
        writers.append(writer)
        writer.write(request_bytes(MOVIE_PATH))
        await writer.drain()
        held = await loop.run_in_executor(None, upstream.got_request.wait, 10)
        sigterm_at = now()
        server.proc.send_signal(signal.SIGTERM)
        cut_after = await wait_eof(reader, grace + 5, writer)
        code = await loop.run_in_executor(None, server.wait_exit, grace + 5)
        exited_at = now() - sigterm_at
        check(held and code == 0 and grace - 0.2 <= exited_at <= grace + SHUTDOWN_SLACK,
              f"s6b: held past the grace period: exit 0 at about {grace}s",
              f"request held: {held}, connection cut at "
              f"{cut_after if cut_after is not None else float('nan'):.2f}s, exit code {code} at {exited_at:.2f}s", server)
    except StartupError as error:
        check(False, "s6b: server starts", str(error))
    finally:
        for writer in writers:
            close_writer(writer)
        server.stop()
        upstream.close()


async def new_connection_refused(port, timeout=1.0):
    """After SIGTERM the listener closes: a connect is refused (or reset, if it raced the close)."""
    deadline = now() + timeout
    last = ""
    while now() < deadline:
        try:
            reader, writer = await connect(port, timeout=0.5)
        except ConnectionRefusedError:
            return True, "connection refused"
        except (OSError, asyncio.TimeoutError) as error:
            last = repr(error)
            await asyncio.sleep(0.05)
            continue
        try:
            status, _, _ = await exchange(reader, writer, "/healthz", timeout=0.5)
            last = f"a new connection was served: {status}"
        except (OSError, ValueError, asyncio.TimeoutError, asyncio.IncompleteReadError) as error:
            last = f"connected, then {type(error).__name__} (not accepted)"
        finally:
            close_writer(writer)
        await asyncio.sleep(0.05)
    return "served" not in last, last


# ---------------------------------------------------------------------------------------
# Driver

def raise_fd_limit(scale_down, only):
    """Raises the soft descriptor limit to the hard one; returns an error message when it
    stays too low for the planned connections (unless `scale_down` allows fewer)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard
    if hard == resource.RLIM_INFINITY:
        try:
            with open("/proc/sys/fs/nr_open") as handle:
                target = int(handle.read())
        except (OSError, ValueError):
            target = 1 << 20
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    except (ValueError, OSError) as error:
        say(f"# could not raise RLIMIT_NOFILE: {error}")
    needed = max(PLAN["burst"], PLAN["slowloris"] + PLAN["idle"]) + 2000
    say(f"# RLIMIT_NOFILE: soft {soft}, hard {hard}; needed for the full run: about {needed} "
        f"(the server, started from here, gets the same limit)")
    if only and not only & {"s2", "s3", "s7"}:
        return None   # the other scenarios need a few hundred descriptors at most
    if soft < needed and not scale_down:
        return (f"the descriptor limit {soft} (hard {hard}) is below the {needed} the planned connections need; "
                f"raise it (ulimit -n {needed} as root, or LimitNOFILE) or pass --scale-down to run fewer, knowingly")
    if soft < needed:
        usable = max(200, soft - 2000)
        factor = usable / (needed - 2000)
        PLAN["burst"] = max(100, int(PLAN["burst"] * factor))
        PLAN["slowloris"] = max(50, int(PLAN["slowloris"] * factor))
        PLAN["idle"] = max(50, int(PLAN["idle"] * factor))
        PLAN["nonreaders"] = max(100, int(PLAN["nonreaders"] * factor))
        say(f"# WARNING: SCALED DOWN: the descriptor limit {soft} is below {needed}; running with "
            f"{PLAN['slowloris']} slowloris + {PLAN['idle']} idle peers and {PLAN['burst']} concurrent connections. "
            f"Raise the hard limit (ulimit -Hn) for the full run.")
        STATE["scaled"] = (f"SCALED DOWN: {PLAN['slowloris']} slowloris + {PLAN['idle']} idle, "
                           f"{PLAN['burst']} concurrent (limit {soft})")
    return None


def watchdog(signum, frame):
    # SystemExit, not TimeoutError: `except TimeoutError` around a single wait must not swallow it.
    raise SystemExit(f"watchdog: the whole run took longer than {RUN_LIMIT}s; stopping")


def terminate(signum, frame):
    raise SystemExit(f"slow-peers.py: signal {signum}; stopping")


async def run_all(binary, workdir, only):
    def wanted(name):
        return not only or name in only

    server = None
    if any(wanted(s) for s in ("s1", "s2", "s3")):
        server = scenario_start(binary, workdir)
        try:
            if server is not None and wanted("s2"):
                await scenario_slowloris(server)
            if server is not None and server.alive() and wanted("s3"):
                await scenario_burst(server)
            elif server is not None and wanted("s3"):
                check(False, "s3: server alive to run it", f"exit code {server.proc.returncode}", server)
        finally:
            if server is not None:
                server.stop()
    if wanted("s4"):
        await scenario_cap(binary, workdir)
    if wanted("s5"):
        await scenario_emfile(binary, workdir)
    if wanted("s6"):
        await scenario_shutdown(binary, workdir)
    if wanted("s7"):
        await scenario_nonreaders(binary, workdir)


# ---------------------------------------------------------------------------------------
# s7: clients that pipeline and never read

def resident_mb(pid):
    """VmRSS of a process in MB, or -1."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return -1.0


def settle(pid, seconds):
    """Polls the resident size until it stops moving (or `seconds` pass): (peak, last) in MB."""
    peak = last = resident_mb(pid)
    steady = 0
    deadline = now() + seconds
    while now() < deadline and steady < 4:
        time.sleep(0.25)
        value = resident_mb(pid)
        steady = steady + 1 if abs(value - last) < 0.5 else 0
        peak, last = max(peak, value), value
    return peak, last


def open_nonreaders(port, count, requests):
    """`count` connections, each sending `requests` pipelined GETs with a tiny receive buffer."""
    sockets = []
    payload = request_bytes(CACHED_PATH) * requests
    for _ in range(count):
        try:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.settimeout(5)
            sock.connect((LOOPBACK, port))
            sock.setblocking(False)
            try:
                sock.send(payload)
            except BlockingIOError:
                pass
            sockets.append(sock)
        except OSError:
            break
    return sockets


async def scenario_nonreaders(binary, workdir):
    count, requests = PLAN["nonreaders"], 64
    say(f"# s7: {count} clients x {requests} pipelined GETs of {CACHED_PATH}, reading nothing")
    server = Server("s7-nonreaders", binary, workdir, args=["--sandbox"], env={
        "AMODB_MAX_PIPELINED": str(requests), "AMODB_ACCESS_LOG": "off"})
    loop = asyncio.get_running_loop()
    sockets = []
    try:
        port = server.start()
        status, body = get_until_ok(port, CACHED_PATH)
        baseline = settle(server.pid, 3)[1]
        sockets = await loop.run_in_executor(None, open_nonreaders, port, count, requests)
        peak, _ = await loop.run_in_executor(None, settle, server.pid, 20)
        per_client = (peak - baseline) * 1024 / max(1, len(sockets))
        # Unsent output is bounded (256 KiB) and queued answers reference the cached body: a
        # few KiB per client. Copies of each answer would cost ~140 KiB per client even so.
        check(len(sockets) == count and per_client < 64,
              f"s7: {count} non-reading clients cost under 64 KiB each (answers reference the cached body)",
              f"{len(sockets)} open, baseline {baseline:.1f} MB, peak {peak:.1f} MB: {per_client:.0f} KiB per client "
              f"({len(body)}-byte answer, {requests} asked for by each)", server)
        for sock in sockets:
            sock.close()
        sockets = []
        closed_at = now()
        after = baseline + 1000
        while now() < closed_at + 10 and after > baseline + 16:
            await asyncio.sleep(0.25)
            after = resident_mb(server.pid)
        check(after <= baseline + 16, "s7: the resident size returns near its baseline (+16 MB) once they close",
              f"{after:.1f} MB {now() - closed_at:.1f} s after the close, baseline {baseline:.1f} MB, peak {peak:.1f} MB",
              server)
        check(server.alive(), "s7: server still running", f"pid {server.pid}", server)
    except StartupError as error:
        check(False, "s7: server starts", str(error))
    finally:
        for sock in sockets:
            sock.close()
        server.stop()


def main():
    parser = argparse.ArgumentParser(description="Load and robustness checks for amodb-proxy.")
    parser.add_argument("--binary", default=os.path.join(REPO, ".build", "release", "amodb-proxy"))
    parser.add_argument("--only", default="", help="comma-separated scenarios to run, e.g. s2,s5 (default: all)")
    parser.add_argument("--scale-down", action="store_true",
                        help="run fewer connections when the descriptor limit is too low, instead of failing")
    parser.add_argument("--latency-client", nargs=4, metavar=("PORT", "PATH", "COUNT", "INTERVAL"),
                        help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.latency_client:
        port, path, count, interval = options.latency_client
        latency_client_main(int(port), path, int(count), float(interval))
        return 0

    binary = os.path.abspath(options.binary)
    if not os.access(binary, os.X_OK):
        say(f"slow-peers.py: no executable at {binary}; build it with: scripts/build-release.sh")
        return 2
    only = {part.strip() for part in options.only.split(",") if part.strip()}
    unknown = sorted(only - set(SCENARIOS))
    if options.only.strip() and (unknown or not only):
        say(f"slow-peers.py: --only names no scenario it knows: {', '.join(unknown) or repr(options.only)} "
            f"(scenarios: {', '.join(SCENARIOS)})")
        return 2
    signal.signal(signal.SIGALRM, watchdog)
    signal.signal(signal.SIGTERM, terminate)
    signal.alarm(RUN_LIMIT)
    problem = raise_fd_limit(options.scale_down, only)
    if problem is not None:
        signal.alarm(0)
        say(f"slow-peers.py: {problem}")
        return 2
    workdir = tempfile.mkdtemp(prefix="slow-peers-")
    started = now()
    aborted = None
    try:
        asyncio.run(run_all(binary, workdir, only))
    except (SystemExit, KeyboardInterrupt) as error:
        aborted = error
        check(False, "run finished by itself", str(error) or type(error).__name__)
    finally:
        signal.alarm(0)
        kill_all_servers()
        for server in FAILED_LOGS:
            say(f"# last lines of {server.name}'s log ({server.log_path}):\n{server.tail()}")
        if RESULTS["failed"] == 0:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            say(f"# server logs kept in {workdir}")
    say(f"# total {now() - started:.1f}s")
    if RESULTS["passed"] + RESULTS["failed"] == 0:
        check(False, "at least one check ran")
    if STATE["scaled"]:
        say(f"# WARNING: {STATE['scaled']}: not the full test")
    say(f"{RESULTS['passed']} passed, {RESULTS['failed']} failed")
    if aborted is not None and RESULTS["passed"] == 0:
        return 2
    return 0 if RESULTS["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
