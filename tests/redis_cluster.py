"""A real Redis Cluster on loopback ports, for the fleet's cluster tests: 3 primaries, and
with ``replicas=1`` a replica of each (3 + 3), which the cluster promotes when its primary
dies (after ``node_timeout`` ms without an answer from it).

Each node keeps its ``nodes.conf`` in a directory of its own and no data (``--save ""``,
no AOF): a node killed and started again rejoins the cluster with its slots, empty, as a
primary restarted without its data does.
"""

from __future__ import annotations

import shutil
import socket
import time

from redis_server import RedisServer, free_port

#: Slots a node serves at most; the cluster's 16384 slots are dealt in three ranges.
SLOTS = 16384


class ClusterNode(RedisServer):
    def __init__(self, port: int | None = None, node_timeout: int = 2000):
        #: The cluster bus, on a port of its own (port + 10000 may be out of range).
        self.bus_port = free_port()
        super().__init__(
            port,
            args=(
                "--cluster-enabled",
                "yes",
                "--cluster-port",
                str(self.bus_port),
                "--cluster-config-file",
                "nodes.conf",
                "--cluster-node-timeout",
                str(node_timeout),
                "--cluster-require-full-coverage",
                "no",
            ),
        )

    def command(self, *args: str | int) -> bytes:
        """One command in RESP, the first line of its answer (enough for the replies used here)."""
        request = f"*{len(args)}\r\n".encode() + b"".join(f"${len(str(a).encode())}\r\n{a}\r\n".encode() for a in args)
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
            sock.sendall(request)
            answer = b""
            while not answer.endswith(b"\r\n"):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                answer += chunk
        return answer

    def cluster_info(self) -> str:
        return self.ask("CLUSTER", "INFO").decode()

    def ask(self, *args: str | int) -> object:
        """One command's whole answer (redis-py, a connection of its own)."""
        import redis

        client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=2)
        try:
            return client.execute_command(*args)
        finally:
            client.close()

    def node_id(self) -> str:
        return self.command("CLUSTER", "MYID").split(b"\r\n")[1].decode()

    def role(self) -> str:
        """``master`` or ``slave``, as the node says of itself."""
        try:
            return self.ask("ROLE")[0].decode()
        except Exception as exc:  # a node down has no role
            return repr(exc)


class RedisCluster:
    """``size`` primaries, each a share of the slots, and ``replicas`` replicas of each
    (``nodes``: the primaries first, then the replicas of primary 0, 1, ...)."""

    def __init__(self, size: int = 3, replicas: int = 0, node_timeout: int = 2000):
        self.size = size
        self.nodes = [ClusterNode(node_timeout=node_timeout) for _ in range(size * (1 + replicas))]
        #: each replica's primary, as started (the cluster may swap their roles since)
        self.primary_of = {replica: self.nodes[n % size] for n, replica in enumerate(self.nodes[size:])}

    @property
    def primaries(self) -> list[ClusterNode]:
        """The primaries as started."""
        return self.nodes[: self.size]

    def replicas_of(self, primary: ClusterNode) -> list[ClusterNode]:
        return [replica for replica, of in self.primary_of.items() if of is primary]

    @property
    def url(self) -> str:
        """One node's URL: the cluster client learns the others from it."""
        return f"redis://127.0.0.1:{self.nodes[0].port}"

    def start(self) -> RedisCluster:
        for node in self.nodes:
            node.start()
        first = self.nodes[0]
        step = SLOTS // self.size
        for n, node in enumerate(self.primaries):
            end = SLOTS - 1 if n == self.size - 1 else (n + 1) * step - 1
            answer = node.command("CLUSTER", "ADDSLOTSRANGE", n * step, end)
            assert answer.startswith(b"+OK"), answer
        for node in self.nodes[1:]:
            meet = first.command("CLUSTER", "MEET", "127.0.0.1", node.port, node.bus_port)
            assert meet.startswith(b"+OK"), meet
        if self.primary_of:
            self._replicate()
        self.wait_ok()
        return self

    def _replicate(self, timeout: float = 20.0) -> None:
        """Each replica follows its primary, and has synced with it (a replica that never
        synced is not promoted)."""
        ids = {node: node.node_id() for node in self.primaries}
        deadline = time.monotonic() + timeout
        for replica, primary in self.primary_of.items():
            # The replica must know the primary's id first (the MEET's gossip).
            while not replica.command("CLUSTER", "REPLICATE", ids[primary]).startswith(b"+OK"):
                assert time.monotonic() < deadline, "a replica did not learn its primary"
                time.sleep(0.1)
        for replica in self.primary_of:
            while replica.ask("INFO", "replication").get("master_link_status") != "up":
                assert time.monotonic() < deadline, "a replica did not sync with its primary"
                time.sleep(0.1)

    def wait_ok(self, timeout: float = 20.0) -> None:
        """Until every node says the cluster is ok and knows every other node."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.ok():
                return
            time.sleep(0.1)
        raise RuntimeError("the Redis Cluster did not come up: " + repr([self._state(n) for n in self.nodes]))

    def ok(self) -> bool:
        """Every node says the cluster is ok, knows every other node and every slot is served."""
        return all(self._ok(node) for node in self.nodes)

    def _state(self, node: ClusterNode) -> str:
        try:
            return node.cluster_info()
        except Exception as exc:  # a node down is a state too
            return repr(exc)

    def _ok(self, node: ClusterNode) -> bool:
        state = self._state(node)
        return (
            "cluster_state:ok" in state
            and f"cluster_known_nodes:{len(self.nodes)}" in state
            and (f"cluster_slots_assigned:{SLOTS}" in state)
        )

    def node_of(self, key: str) -> ClusterNode:
        """The primary (as started) that serves ``key``'s hash slot."""
        from redis.crc import key_slot

        slot = key_slot(key.encode())
        step = SLOTS // self.size
        return self.nodes[min(slot // step, self.size - 1)]

    def promoted(self, primary: ClusterNode) -> bool:
        """A replica of ``primary`` (killed) says it is a primary now."""
        return any(replica.role() == "master" for replica in self.replicas_of(primary))

    def keys(self) -> list[list[str]]:
        """Every node's keys."""
        import redis

        found = []
        for node in self.nodes:
            client = redis.Redis(host="127.0.0.1", port=node.port, socket_timeout=2)
            try:
                found.append(sorted(k.decode() for k in client.keys("*")))
            finally:
                client.close()
        return found

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()
        for node in self.nodes:
            shutil.rmtree(node.dir, ignore_errors=True)
