"""A real Redis server on a loopback port, for the fleet tests and the fleet benchmark."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

#: The CPU priority of every Redis server and Sentinel the tests start, and of the fleet's
#: pace tests (tests/conftest.py): a server started by a test at a lower priority (the
#: session's, by a test that is not timed) would answer late to the pace tests after it.
PACE_NICE = -10


def at_pace_priority(process: subprocess.Popen[bytes]) -> None:
    """Give a server's process the pace tests' priority, where it can be set (root under
    pytest-xdist, as tests/conftest.py); elsewhere it keeps the priority inherited. Set from
    here, not in a ``preexec_fn``, which is unsafe in a process that runs threads."""
    if os.environ.get("PYTEST_XDIST_WORKER") and os.geteuid() == 0:
        try:
            os.setpriority(os.PRIO_PROCESS, process.pid, PACE_NICE)
        except ProcessLookupError:  # exited at once (its port taken): start() sees it
            pass


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RedisServer:
    def __init__(self, port: int | None = None, args: tuple[str, ...] = ()):
        self.port = port or free_port()
        self.args = args  #: more command-line options (``--replicaof host port``)
        self.chosen = port is not None  #: False until a server answered on free_port()'s port
        self.process: subprocess.Popen[bytes] | None = None
        self.dir = tempfile.mkdtemp(prefix="scrapy-robots-redis-")

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        self.spawn()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.ping() and self._is_ours():
                self.chosen = True  # clients know this port now: a restart keeps it
                return self
            if self.process is not None and self.process.poll() is not None and not self.chosen:
                # The free port was taken between free_port() and the bind (another test
                # worker's server or site): take another. A restart keeps its port.
                self.port = free_port()
                self.spawn()
            time.sleep(0.05)
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def spawn(self) -> None:
        """Start the process and return at once; ``ping()`` says when it answers (a caller
        that must not block, such as a reactor serving test sites, polls it)."""
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed: `make test` installs it (Debian package redis-server)")
        self.process = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                self.dir,
                "--logfile",
                "",
                *self.args,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        at_pace_priority(self.process)

    def ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def _is_ours(self) -> bool:
        """The server answering on the port is the process started here, not another
        test worker's that took the port first."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                sock.sendall(b"INFO server\r\n")
                answer = b""
                while b"process_id:" not in answer or not answer.endswith(b"\r\n"):
                    chunk = sock.recv(65536)
                    if not chunk:
                        break
                    answer += chunk
        except OSError:
            return False
        pid = answer.split(b"process_id:", 1)[-1].split(b"\r\n", 1)[0]
        return self.process is not None and pid == str(self.process.pid).encode()

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
            self.process = None

    def flush(self) -> None:
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
            sock.sendall(b"FLUSHALL\r\n")
            sock.recv(16)

    # Faults, for the fleet's fault tests and bench/fleet_faults.py. The server keeps no
    # data on disk (--save "", no AOF): whatever kills it empties it.

    def kill(self) -> None:
        """SIGKILL, as a crash or the OOM killer would: no goodbye to the clients."""
        if self.process is not None:
            self.process.kill()  # a stopped (SIGSTOP) process dies too
            self.process.wait(10)
            self.process = None

    def restart(self) -> RedisServer:
        """Kill if running, then start again on the same port, empty."""
        self.kill()
        return self.start()

    def pause(self) -> None:
        """SIGSTOP: connections stay open and calls hang, as on a frozen host or a long fork."""
        assert self.process is not None, "redis-server is not running"
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT after ``pause()``; harmless on a running server."""
        if self.process is not None:
            self.process.send_signal(signal.SIGCONT)

    def flushall(self) -> None:
        """FLUSHALL on a live server: every key gone, connections kept."""
        self.flush()
