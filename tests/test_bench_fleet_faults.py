"""bench/fleet_faults.py, the fleet's fault benchmark, keeps working: its quickest run (one
Redis fault and the anchor) and the Redis fault helpers it stands on."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from redis_server import RedisServer

# Asserts on a real clock: run at the normal CPU priority under `make test` (tests/conftest.py).
pytestmark = pytest.mark.timing

ROOT = Path(__file__).resolve().parent.parent


def command(server: RedisServer, *words: str) -> bytes:
    with socket.create_connection(("127.0.0.1", server.port), timeout=2) as sock:
        sock.sendall((f"*{len(words)}\r\n" + "".join(f"${len(w)}\r\n{w}\r\n" for w in words)).encode())
        return sock.recv(64)


def test_redis_fault_helpers_kill_pause_resume_restart_flushall():
    server = RedisServer().start()
    try:
        assert command(server, "SET", "k", "v") == b"+OK\r\n"
        server.flushall()
        assert command(server, "EXISTS", "k") == b":0\r\n"
        command(server, "SET", "k", "v")
        server.pause()
        assert not server.ping()  # stopped: the connection is accepted, nothing answers
        server.resume()
        assert server.ping() and command(server, "EXISTS", "k") == b":1\r\n"  # a pause keeps the data
        port = server.port
        server.kill()
        assert not server.ping()
        server.spawn()  # the same port, without blocking: the caller polls
        deadline = time.monotonic() + 10
        while not server.ping() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert server.port == port and command(server, "EXISTS", "k") == b":0\r\n"  # back, empty
        server.pause()
        server.restart()  # kills a stopped server too
        assert server.ping()
    finally:
        server.resume()
        server.stop()


@pytest.mark.slow
def test_quick_redis_kill_run_prints_its_windows_and_the_anchor():
    run = subprocess.run(
        [sys.executable, "bench/fleet_faults.py", "--quick", "--scenario", "redis-kill"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=140,
    )
    out = run.stdout
    assert run.returncode == 0, out[-3000:] + run.stderr[-3000:]
    assert re.search(r"fault 1: redis-server SIGKILLed\n.*recovery 1: redis-server restarted empty", out), out
    # One row per window, each judged against the goal.
    rows = {m[0]: m[1] for m in re.findall(r"^(before|fault 1|after 1|whole) .* (PASS|FAIL|n/a) ", out, re.M)}
    assert set(rows) == {"before", "fault 1", "after 1", "whole"}, out
    # The instrument sees short gaps where there are some: 3 crawlers pacing alone (the
    # anchor) send most requests inside the delay ...
    anchor = re.search(r"^anchor +0/1 +whole ([\d.]+)%", out, re.M)
    assert anchor and float(anchor[1]) > 50, out
    # ... and the fleet before any fault sends none.
    assert rows["before"] == "PASS", out
    assert out.count("disallowed fetched: 0;") == 2, out
    assert "TIMED OUT" not in out, out
