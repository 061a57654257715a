"""Redis Sentinel on loopback ports, for the fleet's failover tests: one primary, one
replica (``--replicaof``) and three Sentinels (``redis-server sentinel.conf --sentinel``)
that fail the primary over within about two seconds of its death."""

from __future__ import annotations

import os
import shutil
import subprocess

import redis as redis_py
from redis_server import RedisServer, at_pace_priority

SERVICE = "mymaster"
#: Short, so that a test's failover takes seconds: the primary is down for the Sentinels
#: after a second without an answer.
DOWN_AFTER_MS = 1000
#: Also how soon the Sentinels may fail the same primary over again (twice this).
FAILOVER_TIMEOUT_MS = 2000


def command(port: int, *args: str, timeout: float = 1.0):
    """One command to the server or Sentinel on ``port`` (a few milliseconds on loopback)."""
    client = redis_py.Redis(host="127.0.0.1", port=port, socket_timeout=timeout, socket_connect_timeout=timeout)
    try:
        return client.execute_command(*args)
    finally:
        client.close()


class SentinelServer(RedisServer):
    """A Sentinel: the same binary, with a configuration file of its own (it rewrites it)."""

    def __init__(self, primary_port: int):
        super().__init__()
        self.primary_port = primary_port

    def spawn(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed: `make test` installs it (Debian package redis-server)")
        config = os.path.join(self.dir, "sentinel.conf")
        if not os.path.exists(config):  # a restart keeps what the Sentinel learnt
            with open(config, "w") as f:
                f.write(
                    f'port {self.port}\nbind 127.0.0.1\ndir {self.dir}\nlogfile ""\n'
                    f"sentinel monitor {SERVICE} 127.0.0.1 {self.primary_port} 2\n"
                    f"sentinel down-after-milliseconds {SERVICE} {DOWN_AFTER_MS}\n"
                    f"sentinel failover-timeout {SERVICE} {FAILOVER_TIMEOUT_MS}\n"
                )
        self.process = subprocess.Popen(
            [binary, config, "--sentinel"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        at_pace_priority(self.process)


class SentinelGroup:
    """``servers[0]`` the first primary, ``servers[1]`` its replica; three Sentinels."""

    def __init__(self) -> None:
        primary = RedisServer()
        self.servers = [primary]
        self.sentinels: list[SentinelServer] = []

    @property
    def setting(self) -> str:
        """ROBOTSTXT_REDIS_SENTINELS as ``-s`` gives it."""
        return ",".join(f"127.0.0.1:{s.port}" for s in self.sentinels)

    @property
    def addresses(self) -> list[tuple[str, int]]:
        return [("127.0.0.1", s.port) for s in self.sentinels]

    def start(self) -> SentinelGroup:
        primary = self.servers[0].start()
        self.servers.append(RedisServer(args=("--replicaof", "127.0.0.1", str(primary.port))).start())
        self.sentinels = [SentinelServer(primary.port).start() for _ in range(3)]
        return self

    def ready(self) -> bool:
        """Every Sentinel sees the primary up, its replicas and the two other Sentinels, and
        every other server running is a replica in sync."""
        try:
            for sentinel in self.sentinels:
                state = command(sentinel.port, "SENTINEL", "MASTER", SERVICE)
                if int(state[b"num-other-sentinels"]) < 2 or int(state[b"num-slaves"]) < len(self.servers) - 1:
                    return False
                if state[b"flags"] != b"master":
                    return False
        except (redis_py.RedisError, OSError):
            return False
        primary = self.primary_port()
        return primary is not None and all(
            self.replica_in_sync(server) for server in self.servers if server.port != primary and server.process
        )

    def primary_port(self) -> int | None:
        """The primary's port as the Sentinels name it (None while they disagree)."""
        ports = set()
        for sentinel in self.sentinels:
            try:
                ports.add(int(command(sentinel.port, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", SERVICE)[1]))
            except (redis_py.RedisError, OSError, TypeError):
                return None
        return ports.pop() if len(ports) == 1 else None

    def primary(self) -> RedisServer:
        port = self.primary_port()
        return next(server for server in self.servers if server.port == port)

    def replica_in_sync(self, server: RedisServer) -> bool:
        try:
            info = command(server.port, "INFO", "replication")
        except (redis_py.RedisError, OSError):
            return False
        return info.get("role") == "slave" and info.get("master_link_status") == "up"

    def stop(self) -> None:
        for process in [*self.sentinels, *self.servers]:
            process.kill()
        for process in [*self.sentinels, *self.servers]:
            shutil.rmtree(process.dir, ignore_errors=True)
