#!/usr/bin/env python3
"""Memory under a flood of failing paths: the resident size must not keep growing.

    python3 Tests/Load/flood.py [--binary PATH] [--floods 4] [--paths 150000]

Starts the release binary (default .build/release/amodb-proxy) with --sandbox, the
access log off, log level error and AMODB_RATE_LIMIT=4, so the upstream budget is
spent after the first three misses and every later request for a movie id never asked
before fails (503, budget exhausted). Then it sends FLOODS floods of PATHS distinct
movie paths each (ids never asked before, longer than a small string, over a few
keep-alive connections, one request at a time) and reads VmRSS from
/proc/<pid>/status after each flood.

  flood size   4 floods of 150,000 distinct failing paths (600,000 in all)
  tolerance    the resident size after the last flood may exceed the size after the
               first flood (the warm-up: buffers, allocator arenas, bounded tables
               filled to their caps) by at most 8 MiB. A table that keeps one entry
               per failed path grows by well over 8 MiB across the last three floods
               (450,000 entries at 50+ bytes each for the key alone).

Also checked: every flood was answered (responses = requests) and failed as planned
(at least 99% 503). Throughput is reported, not asserted. Takes well under a minute
on two cores. Prints `ok - ...` / `not ok - ...`, then `N passed, N failed`; exits 1 if
a check failed, 2 if it could not run.
"""

import argparse
import importlib.util
import multiprocessing
import os
import socket
import sys
import tempfile
import shutil
import time

FLOODS = 4
PATHS = 150_000
TOLERANCE_MIB = 8.0
PIPELINE = 1            # requests in flight per connection (pipelined batches stall at ~700 req/s today)
WORKERS = 3             # client processes, each with one keep-alive connection
FIRST_ID = 100_000_000  # 9 digits: "/3/movie/100000000" is past a small string's 15 bytes

LOAD_DIR = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(LOAD_DIR))


def load_slow_peers():
    """slow-peers.py's Server (start, log, port, kill on exit), so there is one way to run the binary."""
    spec = importlib.util.spec_from_file_location("slow_peers", os.path.join(LOAD_DIR, "slow-peers.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_responses(sock, buffer, count):
    """Reads `count` whole responses; returns (statuses, rest of the buffer)."""
    statuses = []
    while len(statuses) < count:
        end = buffer.find(b"\r\n\r\n")
        if end < 0:
            chunk = sock.recv(262144)
            if not chunk:
                raise ConnectionError(f"closed after {len(statuses)} of {count} responses")
            buffer += chunk
            continue
        head = buffer[:end]
        status = int(head[9:12])
        length = 0
        start = head.lower().find(b"\r\ncontent-length:")
        if start >= 0:
            stop = head.find(b"\r\n", start + 2)
            length = int(head[start + 17:stop if stop >= 0 else len(head)].strip())
        total = end + 4 + length
        while len(buffer) < total:
            chunk = sock.recv(262144)
            if not chunk:
                raise ConnectionError("closed mid-body")
            buffer += chunk
        statuses.append(status)
        buffer = buffer[total:]
    return statuses, buffer


def flood_worker(arguments):
    """One connection: `count` requests for distinct ids from `first`; returns status counts."""
    port, first, count = arguments
    counts = {}
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    buffer = b""
    try:
        for batch_start in range(first, first + count, PIPELINE):
            batch_end = min(batch_start + PIPELINE, first + count)
            sock.sendall(b"".join(
                b"GET /3/movie/%d HTTP/1.1\r\nHost: flood\r\n\r\n" % movie_id for movie_id in range(batch_start, batch_end)))
            statuses, buffer = read_responses(sock, buffer, batch_end - batch_start)
            for status in statuses:
                counts[status] = counts.get(status, 0) + 1
    finally:
        sock.close()
    return counts


RESULTS = {"passed": 0, "failed": 0}


def check(ok, label):
    RESULTS["passed" if ok else "failed"] += 1
    print(f"{'ok' if ok else 'not ok'} - {label}", flush=True)
    return ok


def main():
    parser = argparse.ArgumentParser(description="Resident size under floods of failing paths.")
    parser.add_argument("--binary", default=os.path.join(REPO, ".build", "release", "amodb-proxy"))
    parser.add_argument("--floods", type=int, default=FLOODS)
    parser.add_argument("--paths", type=int, default=PATHS, help="distinct paths per flood")
    options = parser.parse_args()
    binary = os.path.abspath(options.binary)
    if not os.access(binary, os.X_OK):
        print(f"flood.py: no executable at {binary}; build it with: scripts/build-release.sh")
        return 2
    if options.floods < 2:
        print("flood.py: --floods must be at least 2 (a warm-up and one to compare)")
        return 2

    peers = load_slow_peers()

    class QuietServer(peers.Server):
        """At log level error the "listening" line is not written; --sandbox's hint is."""

        def _listening_port(self):
            try:
                with open(self.log_path, "rb") as handle:
                    text = handle.read().decode("utf-8", "replace")
            except OSError:
                return None
            marker = "Try: curl http://127.0.0.1:"
            start = text.find(marker)
            if start < 0:
                return None
            digits = text[start + len(marker):].split("/", 1)[0]
            return int(digits) if digits.isdigit() else None

    workdir = tempfile.mkdtemp(prefix="flood-")
    server = QuietServer("flood", binary, workdir, args=["--sandbox"], env={
        "AMODB_ACCESS_LOG": "off", "AMODB_LOG_LEVEL": "error", "AMODB_RATE_LIMIT": "4",
        "AMODB_CLIENT_RATE_LIMIT": "0",
    })
    started = time.monotonic()
    try:
        port = server.start()
        before = peers.resident_mb(server.pid)
        print(f"# flood: {options.floods} floods of {options.paths:,} distinct failing movie paths; "
              f"RSS at start {before:.1f} MiB; tolerance {TOLERANCE_MIB:.0f} MiB after the first flood")
        samples = []
        next_id = FIRST_ID
        with multiprocessing.Pool(WORKERS) as pool:
            for flood in range(1, options.floods + 1):
                share = options.paths // WORKERS
                jobs = [(port, next_id + worker * share, share) for worker in range(WORKERS)]
                next_id += share * WORKERS
                flood_started = time.monotonic()
                counts = {}
                for result in pool.map(flood_worker, jobs):
                    for status, count in result.items():
                        counts[status] = counts.get(status, 0) + count
                seconds = time.monotonic() - flood_started
                time.sleep(0.5)   # let the server finish writing and release what it will
                samples.append(peers.resident_mb(server.pid))
                answered = sum(counts.values())
                print(f"# flood {flood}: {answered:,} answered in {seconds:.1f}s ({answered / seconds:,.0f} req/s, "
                      f"reported, not asserted), statuses {dict(sorted(counts.items()))}, RSS {samples[-1]:.1f} MiB")
                check(answered == share * WORKERS and counts.get(503, 0) >= 0.99 * answered,
                      f"flood {flood}: every request answered, and failing (503) as planned")
        growth = samples[-1] - samples[0]
        check(growth <= TOLERANCE_MIB and server.alive(),
              f"resident size stops growing under floods of failing paths "
              f"(after each flood: {', '.join(f'{s:.1f}' for s in samples)} MiB; "
              f"+{growth:.1f} MiB after the first, tolerance {TOLERANCE_MIB:.0f} MiB)")
    except (peers.StartupError, OSError, ConnectionError) as error:
        check(False, f"flood ran: {error}")
    finally:
        peers.kill_all_servers()
        failed = RESULTS["failed"] > 0
        if failed:
            print(f"# last lines of the server's log ({server.log_path}):\n{server.tail()}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    print(f"# total {time.monotonic() - started:.1f}s")
    print(f"{RESULTS['passed']} passed, {RESULTS['failed']} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
