#!/usr/bin/env python3
"""The Redis case: a replica that reads large entries from Redis never compresses them again.

    python3 Tests/Load/fleet-variants.py [--binary PATH] [--entries 64] [--body-bytes 200000]
        [--cache-bytes 12582912] [--seconds 10] [--connections 1] [--rate 9] [--client-rate-limit 600]

Starts a redis-server (no persistence, on 127.0.0.1), a stand-in for amodb on loopback that
serves /3/movie/<id> as a valid movie of BODY_BYTES bytes (a long, varied cast), and two
replicas of the release binary sharing that Redis, as a fleet runs:

  1. replica 1 (AMODB_RATE_LIMIT=100000, no per-client limit) fills ENTRIES movies over four
     connections, as other replicas would have; the script waits until every envelope in
     Redis holds the body's gzip and br variants, then stops replica 1.
  2. replica 2, with AMODB_CACHE_MAX_BYTES=CACHE_BYTES (far less than the entries with their
     variants, so nearly every request reads Redis), serves ONE client cycling through the
     ENTRIES paths for SECONDS, asking `br, gzip`, paced at RATE requests a second: within
     the per-client limit (AMODB_CLIENT_RATE_LIMIT, 600 a minute by default).

  checks   replica 2 answers every request 200, in br (the variants came from Redis), calls
           amodb never, and its variant queue has no job and compresses nothing; its resident
           size stays below RSS_LIMIT_MIB throughout; and once the client stops it is idle:
           its CPU time (utime + stime in /proc/PID/stat) grows by less than IDLE_CPU_LIMIT
           seconds across IDLE_SECONDS. Before variants were shared, each read was queued
           for gzip and br again: the core stayed pegged long after the client stopped.

`--connections`, `--rate 0` and `--client-rate-limit 0` replay the attack's variants (several
connections, as fast as answered) for measurement. Python standard library only, loopback
only; every loop is bounded in count and time, every process started here is killed on the
way out. Prints `ok - ...` / `not ok - ...` with the figures, then `N passed, N failed`;
exits 1 if a check failed, 2 if it could not run. About 25 s after the build.
"""

import argparse
import ctypes
import http.server
import importlib.util
import json
import os
import random
import shutil
import signal
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
import time

LOOPBACK = "127.0.0.1"
RSS_LIMIT_MIB = 150.0
IDLE_SECONDS = 3.0
IDLE_CPU_LIMIT = 0.3
VARIANTS_WAIT = 30.0        # replica 1's variants reach Redis within this
REDIS_PREFIX = "fleet-variants:"

LOAD_DIR = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(LOAD_DIR))
RESULTS = {"passed": 0, "failed": 0}
CHILDREN = []


def check(ok, label):
    RESULTS["passed" if ok else "failed"] += 1
    print(f"{'ok' if ok else 'not ok'} - {label}", flush=True)
    return ok


def load_slow_peers():
    """slow-peers.py's Server (start, log, port, kill on exit), so there is one way to run the binary."""
    spec = importlib.util.spec_from_file_location("slow_peers", os.path.join(LOAD_DIR, "slow-peers.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def die_with_parent():
    """Run in a child: it is killed if this script dies (Linux PR_SET_PDEATHSIG = 1)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


# ---------------------------------------------------------------------------------------
# amodb's stand-in: large, valid movies

def movie_body(movie_id, size):
    """A movie as amodb sends it with `append_to_response=credits`, padded with cast members to `size` bytes."""
    rng = random.Random(movie_id)
    syllables = ["an", "ber", "cor", "da", "el", "fin", "gar", "hal", "is", "jor", "ka", "lin", "mor", "nel",
                 "o", "pra", "qui", "ros", "sa", "tor", "ul", "ver", "wen", "xa", "yor", "zed"]

    def name():
        return " ".join("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))).capitalize() for _ in range(2))

    movie = {"id": movie_id, "title": name(), "overview": " ".join(name() for _ in range(30)),
             "runtime": rng.randint(80, 180), "vote_average": round(rng.random() * 10, 1),
             "status": "Released", "credits": {"cast": [], "crew": []}}
    cast = movie["credits"]["cast"]
    text = ""
    while len(text) < size:
        # Members in batches: the JSON is measured once per batch, not once per member.
        for _ in range(max(1, (size - len(text)) // 400)):
            cast.append({"id": rng.randint(1, 10**7), "name": name(), "character": name(), "order": len(cast),
                         "profile_path": "/%024x.jpg" % rng.getrandbits(96), "popularity": round(rng.random() * 50, 3)})
        text = json.dumps(movie, separators=(",", ":"))
    return text.encode()


class StandInAmodb:
    """Serves GET /3/movie/<id> with `movie_body(id, size)`; counts the calls."""

    def __init__(self, size):
        self.size = size
        self.bodies = {}
        self.calls = 0
        self.lock = threading.Lock()
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                path = self.path.split("?", 1)[0]
                parts = path.split("/")
                with owner.lock:
                    owner.calls += 1
                if len(parts) == 4 and parts[1] == "3" and parts[2] == "movie" and parts[3].isdigit():
                    body = owner.body(int(parts[3]))
                    status = 200
                else:
                    body = b'{"success":false,"status_code":34,"status_message":"not found"}'
                    status = 404
                self.send_response(status)
                self.send_header("Content-Type", "application/json;charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True

        self.server = Server((LOOPBACK, 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
        self.thread.start()

    def body(self, movie_id):
        with self.lock:
            if movie_id not in self.bodies:
                self.bodies[movie_id] = movie_body(movie_id, self.size)
            return self.bodies[movie_id]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


# ---------------------------------------------------------------------------------------
# Redis: a server of our own, and the two commands the checks need

class Redis:
    """redis-server on a free port (it cannot report one the kernel chose: a port is picked,
    and another tried if the bind fails), no persistence, in `workdir`."""

    def __init__(self, workdir):
        executable = shutil.which("redis-server") or "/usr/bin/redis-server"
        if not os.access(executable, os.X_OK):
            raise RuntimeError("redis-server is not installed (apt-get install redis-server)")
        for _ in range(20):
            self.port = random.randint(20_000, 31_999)
            log_path = os.path.join(workdir, f"redis-{self.port}.log")
            self.proc = subprocess.Popen(
                [executable, "--port", str(self.port), "--bind", LOOPBACK, "--save", "", "--appendonly", "no",
                 "--dir", workdir, "--logfile", log_path],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=die_with_parent)
            CHILDREN.append(self.proc)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    if self.command(b"PING") == b"PONG":
                        return
                except OSError:
                    time.sleep(0.05)
            self.proc.kill()
            self.proc.wait(timeout=5)
        raise RuntimeError("redis-server did not start on any of 20 ports")

    def command(self, *parts):
        """One command on a fresh connection; its reply (bytes, int, or None for a nil)."""
        with socket.create_connection((LOOPBACK, self.port), timeout=5) as sock:
            sock.sendall(b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts))
            reader = sock.makefile("rb")
            line = reader.readline().rstrip(b"\r\n")
            kind, rest = line[:1], line[1:]
            if kind == b"+":
                return rest
            if kind == b":":
                return int(rest)
            if kind == b"$":
                length = int(rest)
                return None if length < 0 else reader.read(length + 2)[:length]
            raise RuntimeError(f"unexpected reply {line[:80]!r}")

    def url(self):
        return f"redis://{LOOPBACK}:{self.port}/0"


def envelope_codings(value):
    """The codings an envelope (version 2) holds besides identity, from its trailer of two 4-byte lengths."""
    if not value or value[0] != 2 or len(value) < 8:
        return set()
    gzip_length = int.from_bytes(value[-8:-4], "big")
    br_length = int.from_bytes(value[-4:], "big")
    return {name for name, length in (("gzip", gzip_length), ("br", br_length)) if length > 0}


# ---------------------------------------------------------------------------------------
# Clients

def read_response(reader):
    """(status, headers, body) of one response on a keep-alive connection."""
    status_line = reader.readline()
    if not status_line:
        raise ConnectionError("closed before a response")
    status = int(status_line.split(b" ", 2)[1])
    headers = {}
    while True:
        line = reader.readline()
        if line in (b"\r\n", b"\n", b""):
            break
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    body = reader.read(int(headers.get("content-length", "0")))
    return status, headers, body


def get(port, path, accept="identity"):
    with socket.create_connection((LOOPBACK, port), timeout=30) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {LOOPBACK}\r\nAccept-Encoding: {accept}\r\nConnection: close\r\n\r\n".encode())
        return read_response(sock.makefile("rb"))


def metric(port, name, labels=None):
    """The sum of a family's samples with (at least) these labels; None when the family is absent."""
    status, _, body = get(port, "/metrics")
    if status != 200:
        return None
    total, found = 0.0, False
    for line in body.decode().splitlines():
        if not line.startswith(name) or line[len(name):len(name) + 1] not in ("{", " "):
            continue
        if labels and not all(f'{key}="{value}"' in line for key, value in labels.items()):
            continue
        total += float(line.rsplit(" ", 1)[1])
        found = True
    return total if found else None


def client(port, paths, until, interval, tally, lock):
    """One keep-alive connection cycling through `paths` until `until`, one request per `interval` s."""
    sock = socket.create_connection((LOOPBACK, port), timeout=30)
    reader = sock.makefile("rb")
    index = 0
    next_at = time.monotonic()
    try:
        while time.monotonic() < until:
            if interval > 0:
                pause = next_at - time.monotonic()
                if pause > 0:
                    time.sleep(pause)
                next_at += interval
            path = paths[index % len(paths)]
            index += 1
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {LOOPBACK}\r\nAccept-Encoding: br, gzip\r\n\r\n".encode())
            status, headers, _ = read_response(reader)
            with lock:
                key = (status, headers.get("content-encoding", "identity"))
                tally[key] = tally.get(key, 0) + 1
            if status == 429:
                time.sleep(float(headers.get("retry-after", "1")))
    finally:
        sock.close()


def fill(port, paths):
    """Asks for every path once over four connections; the statuses."""
    statuses = []
    lock = threading.Lock()

    def worker(share):
        for path in share:
            status, _, _ = get(port, path, "br, gzip")
            with lock:
                statuses.append(status)

    threads = [threading.Thread(target=worker, args=(paths[i::4],)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return statuses


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------------------------------

def main():
    parser = argparse.ArgumentParser(description="A replica reading large entries from Redis: resident size and CPU.")
    parser.add_argument("--binary", default=os.path.join(REPO, ".build", "release", "amodb-proxy"))
    parser.add_argument("--entries", type=int, default=64)
    parser.add_argument("--body-bytes", type=int, default=200_000)
    parser.add_argument("--cache-bytes", type=int, default=12 * 1024 * 1024, help="replica 2's AMODB_CACHE_MAX_BYTES")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--connections", type=int, default=1)
    parser.add_argument("--rate", type=float, default=9.0, help="requests a second, all connections together; 0: as fast as answered")
    parser.add_argument("--client-rate-limit", type=int, default=600, help="replica 2's AMODB_CLIENT_RATE_LIMIT")
    parser.add_argument("--variants-wait", type=float, default=VARIANTS_WAIT, help="seconds to wait for the variants in Redis")
    parser.add_argument("--watch-drain", type=float, default=0.0,
                        help="when still busy after the idle check, report how long until it is idle, up to this many seconds")
    options = parser.parse_args()
    binary = os.path.abspath(options.binary)
    if not os.access(binary, os.X_OK):
        print(f"fleet-variants.py: no executable at {binary}; build it with: swift build -c release --product amodb-proxy")
        return 2

    peers = load_slow_peers()
    workdir = tempfile.mkdtemp(prefix="fleet-variants-")
    started = time.monotonic()
    upstream = None
    replica2 = None
    try:
        redis = Redis(workdir)
        upstream = StandInAmodb(options.body_bytes)
        common = {
            "AMODB_KEY": "fleet-variants-test-key", "AMODB_UPSTREAM_URL": f"http://{LOOPBACK}:{upstream.port}/3",
            "AMODB_REDIS_URL": redis.url(), "AMODB_REDIS_PREFIX": REDIS_PREFIX, "AMODB_ACCESS_LOG": "off",
        }
        paths = [f"/3/movie/{movie_id}" for movie_id in range(1, options.entries + 1)]
        print(f"# {options.entries} movies of {options.body_bytes:,} bytes; replica 2's cache {options.cache_bytes / 2**20:.0f} MiB; "
              f"{options.connections} connection(s) for {options.seconds:.0f} s at "
              f"{'as fast as answered' if options.rate <= 0 else f'{options.rate:g} req/s'}", flush=True)

        # 1. Another replica fills the entries, and its variants reach Redis.
        replica1 = peers.Server("replica-1", binary, workdir, env={
            **common, "AMODB_RATE_LIMIT": "100000", "AMODB_CLIENT_RATE_LIMIT": "0", "AMODB_CLIENT_SHARE": "1"})
        replica1.start()
        statuses = fill(replica1.port, paths)
        check(statuses.count(200) == len(paths), f"replica 1 filled {statuses.count(200)} of {len(paths)} movies")
        deadline = time.monotonic() + options.variants_wait
        while True:
            complete = sum(envelope_codings(redis.command(b"GET", f"{REDIS_PREFIX}cache:{p[2:]}".encode())) == {"gzip", "br"}
                           for p in paths)
            if complete == len(paths) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        check(complete == len(paths), f"every envelope in Redis holds the gzip and br variants ({complete} of {len(paths)})")
        replica1.stop()

        # 2. A replica with a small cache serves one client cycling through them.
        replica2 = peers.Server("replica-2", binary, workdir, env={
            **common, "AMODB_CACHE_MAX_BYTES": str(options.cache_bytes),
            "AMODB_CLIENT_RATE_LIMIT": str(options.client_rate_limit)})
        replica2.start()
        time.sleep(0.5)
        calls_before = upstream.calls
        rss_start = peers.resident_mb(replica2.pid)
        cpu_start = cpu_seconds(replica2.pid)
        tally, lock = {}, threading.Lock()
        until = time.monotonic() + options.seconds
        interval = options.connections / options.rate if options.rate > 0 else 0
        threads = [threading.Thread(target=client, args=(replica2.port, paths[i:] + paths[:i], until, interval, tally, lock))
                   for i in range(options.connections)]
        for thread in threads:
            thread.start()
        peak = rss_start
        samples = []
        while any(thread.is_alive() for thread in threads):
            time.sleep(0.25)
            peak = max(peak, peers.resident_mb(replica2.pid))
            samples.append((time.monotonic() - (until - options.seconds), peers.resident_mb(replica2.pid)))
        for thread in threads:
            thread.join(timeout=60)
        cpu_busy = cpu_seconds(replica2.pid) - cpu_start
        time.sleep(0.5)   # what was in flight when the client stopped
        idle_start = cpu_seconds(replica2.pid)
        idle_deadline = time.monotonic() + IDLE_SECONDS
        while time.monotonic() < idle_deadline:
            time.sleep(0.25)
            peak = max(peak, peers.resident_mb(replica2.pid))
        idle_cpu = cpu_seconds(replica2.pid) - idle_start
        if idle_cpu >= IDLE_CPU_LIMIT and options.watch_drain > 0:
            stopped = until
            previous = cpu_seconds(replica2.pid)
            while time.monotonic() < stopped + options.watch_drain:
                time.sleep(1)
                peak = max(peak, peers.resident_mb(replica2.pid))
                now_cpu = cpu_seconds(replica2.pid)
                if now_cpu - previous < 0.1:
                    break
                previous = now_cpu
            print(f"# replica 2 busy for {time.monotonic() - stopped:.0f} s after the client stopped "
                  f"(watched up to {options.watch_drain:.0f} s)", flush=True)
        answered = sum(tally.values())
        at = {round(second): rss for second, rss in samples}
        print(f"# replica 2: {answered} answers in {options.seconds:.0f} s, by (status, coding): {dict(sorted(tally.items()))}; "
              f"CPU {cpu_busy:.2f} s while serving; RSS {rss_start:.0f} MiB at start, "
              + ", ".join(f"{at[s]:.0f} at {s} s" for s in sorted(at) if s % 5 == 0 and s > 0)
              + f", peak {peak:.0f} MiB", flush=True)

        check(answered > 0 and tally.get((200, "br"), 0) == answered,
              f"every answer is 200 in br, the variants read from Redis ({tally.get((200, 'br'), 0)} of {answered})")
        check(upstream.calls == calls_before, f"replica 2 called amodb {upstream.calls - calls_before} times (expected none)")
        jobs = metric(replica2.port, "amodb_proxy_variant_jobs_total")
        compressed = metric(replica2.port, "amodb_proxy_variant_compressed_bytes_total")
        check(jobs == 0 and compressed == 0,
              f"replica 2's variant queue had no job and compressed nothing (jobs {jobs}, bytes {compressed})")
        check(peak < RSS_LIMIT_MIB, f"replica 2's resident size stays below {RSS_LIMIT_MIB:.0f} MiB (peak {peak:.0f} MiB)")
        check(idle_cpu < IDLE_CPU_LIMIT,
              f"replica 2 is idle once the client stops: {idle_cpu:.2f} s of CPU across {IDLE_SECONDS:.0f} s "
              f"(limit {IDLE_CPU_LIMIT} s)")
    except (peers.StartupError, RuntimeError, OSError, ConnectionError) as error:
        check(False, f"the Redis case ran: {error}")
    finally:
        peers.kill_all_servers()
        for child in CHILDREN:
            if child.poll() is None:
                child.kill()
                child.wait(timeout=5)
        if upstream is not None:
            upstream.close()
        failed = RESULTS["failed"] > 0
        if failed and replica2 is not None:
            print(f"# last lines of replica 2's log ({replica2.log_path}):\n{replica2.tail()}")
        if not failed:
            shutil.rmtree(workdir, ignore_errors=True)
    print(f"# total {time.monotonic() - started:.1f}s")
    print(f"{RESULTS['passed']} passed, {RESULTS['failed']} failed")
    return 1 if RESULTS["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
