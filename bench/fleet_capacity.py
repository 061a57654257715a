"""The fleet's capacity, planned: what a site costs in Redis, the commands per page and per
site, and the reservations per second one Redis node sustains.

    .venv/bin/python bench/fleet_capacity.py                  # everything at the defaults (about 8 min)
    .venv/bin/python bench/fleet_capacity.py --only memory --crawl-sites 2000 --sites 10000,100000
    .venv/bin/python bench/fleet_capacity.py --only commands --cmd-sites 200 --pages 10
    .venv/bin/python bench/fleet_capacity.py --only reserve --crawlers 1,2,4 --seconds 10
    .venv/bin/python bench/fleet_capacity.py --tree ../before  # another checkout's package, same harness

Everything runs against one fresh redis-server that the script starts (tests/redis_server.py's
RedisServer, no persistence, loopback), flushed (and its script cache emptied) before each
run. The sites are one loopback forward proxy in its own process (bench/_capacity_site.py,
bench/_broad_site.py's proxy: ``s00042.example`` and any other site behind one port, no DNS);
the crawls reach it through ``http_proxy``.

1. **Bytes per site** (``--only memory``). ``--crawl-sites`` (default 2,000 and 10,000): a real
   ``scrapy crawl`` (``scrapy runspider`` of the test suite's recording spider, one process)
   with the fleet storage, one page per site, each site's robots.txt a corpus file (site i:
   file i % 4,231 of the sorted corpus, as it is, Crawl-delay lines kept and clamped to
   0.2 s by ROBOTSTXT_MAX_CRAWL_DELAY so that the crawl does not wait on them), and
   ``ROBOTSTXT_USAGE = "train-ai"`` so that each site's ``tdmrep.json`` is fetched and stored
   too (the proxy answers it 404). Scrapy's own scheduler: Redis holds the package's keys
   only. ``--sites`` (default 10,000 and 100,000): the same sites written without a crawl
   (bench/_capacity_redis.py ``save``): each robots.txt response through the package's own
   size cap, ``decide`` and reader, then ``RedisRobotsStorage.save``; the tdmrep.json 404 the
   same way; the pacer's ``mark_start`` and one reservation for a site with a delay. Where a
   size is in both lists, the two ways are compared (their keys' ``MEMORY USAGE`` must agree
   within a few %: the save path stands for the crawl at sizes a crawl would take too long to
   reach; ``used_memory`` is printed beside it, and differs more at small sizes, where the
   server's fixed tables weigh more than the sites).
   Measured after the writers exit: ``used_memory`` (``INFO memory``) over the flushed
   server's, per site; every key's ``MEMORY USAGE`` (``SCAN``), summed per key family
   (robots.txt records, tdmrep.json records, locks, pace, heartbeats, pauses, epochs); the
   value bytes of up to 2,000 keys per family (each hash field's ``HSTRLEN``, a string's
   ``STRLEN``). Cost: a crawl does about 100 sites/s here (10,000 sites: about 2 min), the
   save path about 3,000 sites/s (100,000 sites: under a minute).
2. **Commands per page and per site** (``--only commands``). Two ``scrapy crawl`` processes of
   tests/fleet_project (scrapy-redis's scheduler and dupefilter, the fleet storage and pace),
   ``--cmd-sites`` sites (default 100) x ``--pages`` pages (default 10) dealt round-robin to
   the two, each site a short robots.txt: once without a Crawl-delay, once with
   ``Crawl-delay: 0.1`` (a pace reservation per page). Every command Redis receives is read
   with ``MONITOR`` and attributed by its first key to a key family, scrapy-redis's
   (``fleet:requests``, ``fleet:dupefilter``) or the package's; commands without a key
   (``MULTI``/``EXEC``, ``PING``, the connection's set-up) to their connection's owner; the
   commands scripts run inside Redis (``[lua]``) apart. Per page, per site and per
   crawler-second (the periodic polls: pauses, the records' epoch). Cost: about 40 s.
3. **Reservations per second** (``--only reserve``). N = 1, 2, 4 processes
   (``--crawlers``), each with 50 tasks calling the real ``RedisPacer.reserve`` (through
   ``RedisRobotsStorage.pacer()``) on random slots of 10,000, as fast as Redis answers, for
   ``--seconds`` (default 10), ``ROBOTSTXT_REDIS_TIMEOUT = 5`` (a call that waits for a CPU is
   not an outage). Redis's CPU: ``used_cpu_sys + used_cpu_user`` (``INFO cpu``) over the
   window / its wall time. On this 2-core machine the Python clients, not Redis, run out of
   CPU first: ``reservations per Redis CPU-second`` is what one Redis core would sustain.
   Cost: N x (``--seconds`` + about 5 s of start-up).

At the end, a sizing table from the figures measured: sites per day -> records kept (sites/day
x (``ROBOTSTXT_CACHE_TTL`` + ``ROBOTSTXT_FLEET_KEEP_AFTER_EXPIRY``) / one day: ``--ttl-days``,
``--keep-days``)
-> memory; the package's commands per second for the sites, and per 1,000 pages a second.

``--tree DIR`` runs every crawl and worker with PYTHONPATH=DIR: the same harness measures another
checkout's package (the header says which one the crawls import). Every crawl is killed past
its bound (``--crawl-timeout``); a killed or failed crawl is flagged in its row.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # tests/redis_server.py
sys.path.insert(0, str(ROOT / "bench"))

import redis  # noqa: E402
from _broad_site import host  # noqa: E402
from _common import print_table  # noqa: E402
from redis_server import RedisServer  # noqa: E402

PYTHON = sys.executable
RECORDING_SPIDER = ROOT / "tests" / "spiders" / "recording.py"
FLEET_PROJECT = ROOT / "tests" / "fleet_project"
USER_AGENT = "Mozilla/5.0 (compatible; FleetBot/1.0; +https://example.com/fleetbot)"
#: The crawls' and the workers' settings (tests/fleet_project's, without scrapy-redis).
SETTINGS: dict[str, Any] = {
    "BOT_NAME": "fleetbot",
    "USER_AGENT": USER_AGENT,
    "ROBOTSTXT_OBEY": True,
    "ADDONS": {"scrapy_robots.Addon": 0},
    "ROBOTSTXT_CACHE_STORAGE": "scrapy_robots.fleet.RedisRobotsStorage",
    # Each site's tdmrep.json is fetched and stored: one more record per site.
    "ROBOTSTXT_USAGE": "train-ai",
    # The corpus's Crawl-delay lines are kept (a site's pace keys are part of its cost) but
    # clamped, so that a one-page crawl does not wait on them.
    "ROBOTSTXT_MAX_CRAWL_DELAY": 0.2,
    "ROBOTSTXT_CRAWL_DELAY_EXCEEDED": "clamp",
    # Bytes and commands are measured, not latency: a call that times out on a loaded machine
    # (0.5 s, the default) would leave its keys out (335 of 150 sites' calls did under `make test`).
    "ROBOTSTXT_REDIS_TIMEOUT": 5.0,
}
CRAWL_SETTINGS = {"CONCURRENT_REQUESTS": 64, "TELNETCONSOLE_ENABLED": False}
CMD_DELAY = 0.1
RESERVE_SLOTS = 10_000
SAMPLE = 2000  # keys per family whose value bytes are read
SCRAPY_REDIS = "fleet:"  # the fleet project's spider is "fleet": its scrapy-redis keys
#: --logs DIR: every crawl logs at INFO there (else WARNING, in a folder deleted after it)
LOGS: list[Path] = []
_LOG_NUMBERS = itertools.count()


# -- processes -----------------------------------------------------------------------


def settings_args(settings: dict[str, Any]) -> list[str]:
    args: list[str] = []
    for name, value in settings.items():
        args += ["-s", f"{name}={json.dumps(value) if isinstance(value, dict) else value}"]
    return args


class Proxy:
    """bench/_capacity_site.py in its own process."""

    def __init__(self, mode: str, delay: float = 0.0):
        port_file = Path(tempfile.mktemp(prefix="capacity-proxy-"))
        self.process = subprocess.Popen(
            [PYTHON, str(ROOT / "bench" / "_capacity_site.py"), str(port_file), mode, str(delay)], stdin=subprocess.PIPE
        )
        deadline = time.monotonic() + 30
        while not port_file.exists() or not port_file.read_text():
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError("the sites' proxy did not start")
            time.sleep(0.05)
        self.port = int(port_file.read_text())
        port_file.unlink()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stats(self) -> dict[str, Any]:
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as sock:
            sock.sendall(b"GET /__stats__ HTTP/1.0\r\n\r\n")
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        return json.loads(answer.split(b"\r\n\r\n", 1)[1])

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def environment(tree: Path, proxy: Proxy, first: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("http_proxy", "https_proxy", "no_proxy")}
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in (first, tree) if p is not None)
    env["http_proxy"] = proxy.url  # Scrapy's HttpProxyMiddleware: every request through the sites' proxy
    return env


@dataclass
class Crawl:
    """A crawl process and what it left."""

    process: subprocess.Popen[bytes]
    out: Path
    log: Path
    started: float
    ended: float = 0.0
    killed: bool = False

    def wait(self, deadline: float) -> dict[str, Any]:
        try:
            self.process.wait(max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            self.killed = True
        self.ended = time.monotonic()
        try:
            result = json.loads(self.out.read_text())
        except (OSError, ValueError):
            result = {"downloaded": [], "failed": {}, "stats": {}}
        result["exit"] = self.process.returncode
        return result

    def problems(self, result: dict[str, Any]) -> str:
        found = []
        if self.killed:
            found.append("KILLED at its bound")
        elif result["exit"] != 0:
            found.append(f"exit {result['exit']} (log {self.log})")
        if result.get("failed"):
            found.append(f"{len(result['failed'])} failed")
        return "; ".join(found) or "-"


def log_file(work: Path, name: str) -> tuple[Path, dict[str, Any]]:
    """Where a crawl logs, and at which level."""
    if not LOGS:
        return work / "crawl.log", {"LOG_LEVEL": "WARNING"}
    return LOGS[0] / f"{next(_LOG_NUMBERS):02d}-{name}.log", {"LOG_LEVEL": "INFO"}


def start_recording_crawl(urls: list[str], settings: dict[str, Any], env: dict[str, str], work: Path) -> Crawl:
    urls_file, out = work / "urls.txt", work / "out.json"
    log, level = log_file(work, f"memory-{len(urls)}")
    urls_file.write_text("\n".join(urls))
    args = ["-m", "scrapy", "runspider", str(RECORDING_SPIDER), "-a", f"urls_file={urls_file}", "-a", f"out={out}"]
    args += settings_args({**settings, **level, "LOG_FILE": str(log)})
    process = subprocess.Popen([PYTHON, *args], cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    return Crawl(process, out, log, time.monotonic())


def start_fleet_crawler(urls: list[str], settings: dict[str, Any], env: dict[str, str], work: Path) -> Crawl:
    """A crawler of tests/fleet_project (scrapy-redis's scheduler and dupefilter)."""
    out = work / "out.json"
    log, level = log_file(work, f"commands-{work.name}")
    urls_arg = ",".join(urls)
    if len(urls_arg) > 120_000:  # one argument of a command line is at most 128 KiB
        raise SystemExit(f"{len(urls)} URLs per crawler do not fit in -a urls=: fewer --cmd-sites or --pages")
    args = ["-m", "scrapy", "crawl", "fleet", "-a", f"urls={urls_arg}", "-a", f"out={out}"]
    args += settings_args({**settings, **level, "LOG_FILE": str(log)})
    process = subprocess.Popen(
        [PYTHON, *args], cwd=FLEET_PROJECT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT
    )
    return Crawl(process, out, log, time.monotonic())


def run_worker(args: list[str], env: dict[str, str], timeout: float) -> dict[str, Any]:
    out = Path(tempfile.mktemp(prefix="capacity-worker-", suffix=".json"))
    done = subprocess.run(
        [PYTHON, str(ROOT / "bench" / "_capacity_redis.py"), *args, str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if done.returncode != 0:
        raise RuntimeError(f"bench/_capacity_redis.py {args[0]} failed:\n{done.stderr[-3000:]}")
    result = json.loads(out.read_text())
    out.unlink()
    return result


# -- Redis, looked at ----------------------------------------------------------------


def fresh(client: redis.Redis) -> int:
    """Flush the server and its scripts; return its used_memory then."""
    client.flushall()
    client.script_flush()
    client.config_resetstat()
    time.sleep(0.2)
    return int(client.info("memory")["used_memory"])


def family(key: str) -> str:
    """A key's family, by the words in its name (which survive a new key layout)."""
    if key.startswith(SCRAPY_REDIS):
        return f"scrapy-redis {key[len(SCRAPY_REDIS) :]}"
    if "lock" in key:
        return "locks"
    if "tdmrep" in key:
        return "tdmrep.json records"
    if "epoch" in key:
        return "epochs"
    if "slotpace" in key or "pace" in key:
        return "pace"
    if "crawlers" in key or "heartbeat" in key:
        return "heartbeats"
    if "pause" in key:
        return "pauses"
    if "robots" in key:
        return "robots.txt records"
    return "other"


@dataclass
class Family:
    keys: int = 0
    usage: int = 0  # MEMORY USAGE, summed
    kind: str = ""
    sampled: int = 0
    values: Counter[str] = field(default_factory=Counter)  # field (or "value") -> bytes over the sample


def families(client: redis.Redis) -> dict[str, Family]:
    found: dict[str, Family] = defaultdict(Family)
    cursor = 0
    while True:
        cursor, keys = client.scan(cursor, count=1000)
        if keys:
            pipe = client.pipeline(transaction=False)
            for key in keys:
                pipe.memory_usage(key, samples=0)
                pipe.type(key)
            answers = pipe.execute()
            sample: list[tuple[Family, bytes, str]] = []
            for key, usage, kind in zip(keys, answers[::2], answers[1::2]):
                fam = found[family(key.decode("utf-8", "replace"))]
                fam.keys += 1
                fam.usage += usage or 0
                fam.kind = kind.decode() if isinstance(kind, bytes) else str(kind)
                if fam.sampled < SAMPLE:
                    fam.sampled += 1
                    sample.append((fam, key, fam.kind))
            value_bytes(client, sample)
        if cursor == 0:
            return dict(found)


def value_bytes(client: redis.Redis, sample: list[tuple[Family, bytes, str]]) -> None:
    hashes = [(fam, key) for fam, key, kind in sample if kind == "hash"]
    pipe = client.pipeline(transaction=False)
    for _, key in hashes:
        pipe.hkeys(key)
    names = pipe.execute()
    pipe = client.pipeline(transaction=False)
    asked: list[tuple[Family, str]] = []
    for (fam, key), fields in zip(hashes, names):
        for name in fields:
            pipe.hstrlen(key, name)
            asked.append((fam, name.decode()))
    for fam, key, kind in sample:
        if kind == "string":
            pipe.strlen(key)
            asked.append((fam, "value"))
        elif kind == "zset":
            pipe.zcard(key)
            asked.append((fam, "members"))
    for (fam, name), size in zip(asked, pipe.execute()):
        fam.values[name] += size


# -- 1. bytes per site ----------------------------------------------------------------


@dataclass
class MemoryRun:
    how: str  # "crawl" or "save"
    sites: int
    used: int  # used_memory over the flushed server's
    families: dict[str, Family]
    seconds: float
    notes: str = "-"

    @property
    def ours(self) -> dict[str, Family]:
        return {name: fam for name, fam in self.families.items() if not name.startswith("scrapy-redis")}

    def per_site(self, name: str) -> float:
        fam = self.families.get(name)
        return fam.usage / self.sites if fam else 0.0

    @property
    def usage_per_site(self) -> float:
        return sum(f.usage for f in self.ours.values()) / self.sites

    @property
    def used_per_site(self) -> float:
        return self.used / self.sites


def crawl_memory(sites: int, client: redis.Redis, redis_url: str, env: dict[str, str], timeout: float) -> MemoryRun:
    base = fresh(client)
    urls = [f"http://{host(i)}/p0" for i in range(sites)]
    with tempfile.TemporaryDirectory(prefix="capacity-crawl-") as work:
        crawl = start_recording_crawl(
            urls, {**SETTINGS, **CRAWL_SETTINGS, "ROBOTSTXT_REDIS_URL": redis_url}, env, Path(work)
        )
        result = crawl.wait(crawl.started + timeout)
        notes = crawl.problems(result)
    used = int(client.info("memory")["used_memory"]) - base
    stats = result.get("stats", {})
    fetched = stats.get("robotstxt/fleet/fetch", 0)
    pages = len(result.get("downloaded", []))
    notes = f"{pages} pages, {fetched} fleet fetches" + ("" if notes == "-" else f"; {notes}")
    return MemoryRun("crawl", sites, used, families(client), crawl.ended - crawl.started, notes)


def save_memory(sites: int, client: redis.Redis, redis_url: str, env: dict[str, str], timeout: float) -> MemoryRun:
    base = fresh(client)
    started = time.monotonic()
    settings = {**SETTINGS, "ROBOTSTXT_REDIS_URL": redis_url}
    result = run_worker(["save", json.dumps(settings), "0", str(sites)], env, timeout)
    seconds = time.monotonic() - started
    used = int(client.info("memory")["used_memory"]) - base
    notes = f"{result['records']} + {result['tdmrep']} records, {result['paced']} paced"
    if result.get("fallback"):
        notes += f"; {result['fallback']} FALLBACKS (Redis not used)"
    return MemoryRun("save", sites, used, families(client), seconds, notes)


ORDER = ["robots.txt records", "tdmrep.json records", "pace", "locks", "heartbeats", "pauses", "epochs", "other"]


def report_memory(runs: list[MemoryRun]) -> None:
    print("1. Bytes per site in Redis (the package's keys only: Scrapy's own scheduler)\n")
    names = [n for n in ORDER if any(n in r.families for r in runs)]
    headers = ["how", "sites", "used_memory Δ", "B/site", "Σ MEMORY USAGE/site", *[f"{n} B/site" for n in names]]
    headers += ["s", "notes"]
    rows = []
    for r in runs:
        rows.append(
            [
                r.how,
                f"{r.sites:,}",
                f"{r.used:,}",
                f"{r.used_per_site:,.0f}",
                f"{r.usage_per_site:,.0f}",
                *[f"{r.per_site(n):,.1f}" for n in names],
                f"{r.seconds:.0f}",
                r.notes,
            ]
        )
    print_table(headers, rows)
    largest = max(runs, key=lambda r: (r.sites, r.how == "save"))
    print(f"Key families of the {largest.how} of {largest.sites:,} sites (value bytes: mean of up to {SAMPLE:,} keys)")
    rows = []
    for name in [n for n in ORDER if n in largest.families] + sorted(set(largest.families) - set(ORDER)):
        fam = largest.families[name]
        values = ", ".join(f"{k} {v / max(fam.sampled, 1):,.0f}" for k, v in sorted(fam.values.items()))
        rows.append(
            [name, fam.kind, f"{fam.keys:,}", f"{fam.usage / max(fam.keys, 1):,.0f}", f"{fam.usage:,}", values or "-"]
        )
    print_table(["family", "type", "keys", "B/key", "bytes", "value bytes per key"], rows)
    crawls = {r.sites: r for r in runs if r.how == "crawl"}
    for r in runs:
        c = crawls.get(r.sites)
        if r.how == "save" and c is not None:
            used = r.used_per_site / c.used_per_site - 1
            usage = r.usage_per_site / c.usage_per_site - 1
            print(
                f"  save path vs crawl at {r.sites:,} sites: used_memory/site {used:+.1%}, "
                # The keys decide: at a few hundred sites used_memory is mostly the server's fixed
                # tables (a crawl's connections, the 256 pace shards' epochs), not the sites.
                f"Σ MEMORY USAGE/site {usage:+.1%} (keys {'agree' if abs(usage) < 0.05 else 'DIFFER'} within 5 %)"
            )
    print()


# -- 2. commands per page and per site --------------------------------------------------

_LINE = re.compile(rb'^\+[\d.]+ \[\d+ ([^\]]+)\] "((?:[^"\\]|\\.)*)"(.*)$')
_ARG = re.compile(rb'"((?:[^"\\]|\\.)*)"')


class Monitor(threading.Thread):
    """MONITOR on a raw connection: every command, its connection, its first key."""

    def __init__(self, port: int):
        super().__init__(daemon=True)
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=0.2)
        self.sock.sendall(b"MONITOR\r\n")
        self.stopping = False
        self.top: Counter[tuple[str, str]] = Counter()  # (family, command) -> count
        self.lua: Counter[tuple[str, str]] = Counter()
        self.keyless: dict[str, Counter[str]] = defaultdict(Counter)  # connection -> command -> count
        self.owner: dict[str, str] = {}  # connection -> "ours" / "scrapy-redis"

    def run(self) -> None:
        buffer = b""
        while not self.stopping:
            try:
                chunk = self.sock.recv(1 << 20)
            except TimeoutError:
                continue
            if not chunk:
                break
            buffer += chunk
            *lines, buffer = buffer.split(b"\r\n")
            for line in lines:
                self.count(line)

    def count(self, line: bytes) -> None:
        match = _LINE.match(line)
        if match is None:
            return
        client, command, rest = match[1].decode(), match[2].decode().upper(), match[3]
        args = _ARG.findall(rest)
        if command in ("EVALSHA", "EVAL", "EVALSHA_RO", "EVAL_RO"):
            key = args[2] if len(args) > 2 and args[1] != b"0" else None
        elif command in ("MULTI", "EXEC", "PING", "CLIENT", "HELLO", "SELECT", "SCRIPT", "INFO", "DISCARD", "ECHO"):
            key = None
        else:
            key = args[0] if args else None
        if key is None:
            if client != "lua":
                self.keyless[client][command] += 1
            return
        name = family(key.decode("utf-8", "replace"))
        (self.lua if client == "lua" else self.top)[(name, command)] += 1
        if client != "lua":
            self.owner[client] = "scrapy-redis" if name.startswith("scrapy-redis") else "ours"

    def stop(self) -> None:
        time.sleep(0.5)  # the last lines
        self.stopping = True
        self.join(5)
        self.sock.close()

    def keyless_by_owner(self) -> dict[str, Counter[str]]:
        found: dict[str, Counter[str]] = defaultdict(Counter)
        for client, commands in self.keyless.items():
            found[self.owner.get(client, "unknown")].update(commands)
        return found


@dataclass
class CommandRun:
    title: str
    sites: int
    pages: int  # downloaded
    crawler_seconds: float
    monitor: Monitor
    commandstats: int
    notes: str


def crawl_commands(
    title: str, mode: str, sites: int, pages: int, server: RedisServer, client: redis.Redis, tree: Path, timeout: float
) -> CommandRun:
    proxy = Proxy(mode, CMD_DELAY)
    try:
        env = environment(tree, proxy, first=FLEET_PROJECT)
        fresh(client)
        shares: list[list[str]] = [[], []]
        for page in range(pages):
            for i in range(sites):
                shares[page % 2].append(f"http://{host(i)}/p{page}")
        monitor = Monitor(server.port)
        monitor.start()
        settings = {
            **{k: v for k, v in SETTINGS.items() if k.startswith("ROBOTSTXT_")},
            "REDIS_URL": server.url,
        }
        with tempfile.TemporaryDirectory(prefix="capacity-cmd-") as work:
            crawls = []
            for n, urls in enumerate(shares):
                folder = Path(work) / f"{mode}-{n}"
                folder.mkdir()
                crawls.append(start_fleet_crawler(urls, settings, env, folder))
            deadline = time.monotonic() + timeout
            results = [crawl.wait(deadline) for crawl in crawls]
            notes = "; ".join(p for p in (c.problems(r) for c, r in zip(crawls, results)) if p != "-") or "-"
        monitor.stop()
        calls = sum(v["calls"] for k, v in client.info("commandstats").items())
        downloaded = sum(len(r.get("downloaded", [])) for r in results)
        robots = proxy.stats()["robots"]
    finally:
        proxy.stop()
    seconds = sum(c.ended - c.started for c in crawls)
    # The crawlers' own account: a second download of a site comes with a takeover or a fallback.
    stats: Counter[str] = Counter()
    for result in results:
        stats.update({k.rsplit("/", 1)[1]: v for k, v in result.get("stats", {}).items() if "/fleet/" in k})
    said = ", ".join(
        f"{k} {stats[k]}" for k in ("fetch", "lock_wait", "lock_takeover", "fallback", "redis_unreachable")
    )
    twice = f" (MORE THAN ONCE PER SITE: {robots - sites})" if robots > sites else ""
    notes = f"{downloaded} pages, robots.txt fetched {robots}x{twice}; robotstxt/fleet/* {said}" + (
        "" if notes == "-" else f"; {notes}"
    )
    return CommandRun(title, sites, downloaded, seconds, monitor, calls, notes)


#: The families a crawler polls on a clock, whatever it crawls.
PERIODIC = ("pauses", "epochs")


def report_commands(runs: list[CommandRun]) -> dict[str, dict[str, float]]:
    """Print each run's commands; return {title: the package's commands per site, per paced page, per
    crawler-second}."""
    print("2. Redis commands of a 2-crawler fleet crawl (scrapy-redis's queue and the package), read with MONITOR\n")
    figures: dict[str, dict[str, float]] = {}
    for r in runs:
        print(f"{r.title}: {r.sites} sites x {r.pages // max(r.sites, 1)} pages; {r.notes}")
        rows = []
        totals: Counter[str] = Counter()
        keyless = r.monitor.keyless_by_owner()
        names = sorted({name for name, _ in r.monitor.top}, key=lambda n: (n.startswith("scrapy-redis"), n))
        for name in names:
            commands = {cmd: n for (fam, cmd), n in r.monitor.top.items() if fam == name}
            lua = sum(n for (fam, _), n in r.monitor.lua.items() if fam == name)
            total = sum(commands.values())
            totals["scrapy-redis" if name.startswith("scrapy-redis") else "ours"] += total
            rows.append(row(name, total, r, lua, commands))
        for owner, commands in sorted(keyless.items()):
            total = sum(commands.values())
            totals[owner] += total
            rows.append(row(f"{owner}: no key", total, r, 0, commands))
        for owner in ("ours", "scrapy-redis"):
            rows.append(row(f"TOTAL {owner}", totals[owner], r, None, {}))
        print_table(["family", "commands", "per page", "per site", "per crawler-s", "inside scripts", "which"], rows)
        seen = sum(r.monitor.top.values()) + sum(r.monitor.lua.values())
        seen += sum(sum(c.values()) for c in keyless.values())
        print(f"  INFO commandstats calls {r.commandstats:,}, MONITOR lines {seen:,} (commandstats counts INFO too)\n")
        periodic = sum(n for (fam, _), n in r.monitor.top.items() if fam in PERIODIC)
        paced = sum(n for (fam, _), n in r.monitor.top.items() if fam == "pace")
        figures[r.title] = {
            "site": (totals["ours"] - periodic - paced) / r.sites,
            "paced page": paced / max(r.pages, 1),
            "crawler-s": periodic / max(r.crawler_seconds, 1e-9),
        }
        print(
            f"  the package: {figures[r.title]['site']:.1f} commands per site (all but the pace and the polls), "
            f"{figures[r.title]['paced page']:.2f} pace commands per page, "
            f"{figures[r.title]['crawler-s']:.2f} polls per crawler-second ({', '.join(PERIODIC)})\n"
        )
    return figures


def row(name: str, total: int, r: CommandRun, lua: int | None, commands: dict[str, int]) -> list[str]:
    which = ", ".join(f"{cmd} {n}" for cmd, n in sorted(commands.items(), key=lambda kv: -kv[1])[:5])
    return [
        name,
        f"{total:,}",
        f"{total / max(r.pages, 1):.2f}",
        f"{total / r.sites:.2f}",
        f"{total / max(r.crawler_seconds, 1e-9):.1f}",
        "-" if lua is None else f"{lua:,}",
        which or "-",
    ]


# -- 3. reservations per second ----------------------------------------------------------


@dataclass
class ReserveRun:
    crawlers: int
    count: int
    errors: int
    seconds: float
    redis_cpu: float  # CPU seconds of redis-server over the window
    p50: float
    p99: float


def redis_cpu(client: redis.Redis) -> float:
    info = client.info("cpu")
    return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])


def reservations(n: int, seconds: float, client: redis.Redis, redis_url: str, env: dict[str, str]) -> ReserveRun:
    fresh(client)
    settings = {**SETTINGS, "ROBOTSTXT_REDIS_URL": redis_url, "ROBOTSTXT_REDIS_TIMEOUT": 5}
    start_at = time.time() + 4 + n  # the workers' imports and set-up first
    outs = [Path(tempfile.mktemp(prefix="capacity-reserve-", suffix=".json")) for _ in range(n)]
    args = ["reserve", json.dumps(settings), str(seconds), str(RESERVE_SLOTS), str(start_at)]
    workers = [
        subprocess.Popen([PYTHON, str(ROOT / "bench" / "_capacity_redis.py"), *args, str(out)], env=env) for out in outs
    ]
    time.sleep(max(start_at - time.time(), 0))
    cpu, wall = redis_cpu(client), time.monotonic()
    time.sleep(seconds)
    cpu, wall = redis_cpu(client) - cpu, time.monotonic() - wall
    for worker in workers:
        try:
            worker.wait(seconds + 60)
        except subprocess.TimeoutExpired:
            worker.kill()
    results = []
    for out in outs:
        try:
            results.append(json.loads(out.read_text()))
            out.unlink()
        except (OSError, ValueError):
            results.append({"count": 0, "errors": 0, "seconds": seconds, "p50": None, "p99": None})
    count = sum(r["count"] for r in results)
    p50 = max((r["p50"] or 0.0) for r in results)
    p99 = max((r["p99"] or 0.0) for r in results)
    return ReserveRun(n, count, sum(r["errors"] for r in results), wall, cpu, p50, p99)


def report_reservations(runs: list[ReserveRun], seconds: float) -> float:
    print(
        f"3. Reservations per second on one Redis: N processes x 50 tasks calling RedisPacer.reserve, "
        f"{RESERVE_SLOTS:,} slots, {seconds:g} s\n"
    )
    rows = []
    best = 0.0
    for r in runs:
        rate = r.count / seconds
        per_cpu = r.count / r.redis_cpu if r.redis_cpu > 0 else float("nan")
        best = max(best, per_cpu)
        rows.append(
            [
                r.crawlers,
                f"{r.count:,}",
                f"{rate:,.0f}",
                f"{r.redis_cpu / r.seconds:.0%}",
                f"{per_cpu:,.0f}",
                f"{r.p50 * 1000:.1f}",
                f"{r.p99 * 1000:.1f}",
                r.errors,
            ]
        )
    print_table(
        ["crawlers", "reservations", "per s", "Redis CPU", "per Redis CPU-s", "p50 ms", "p99 ms", "errors"], rows
    )
    return best


# -- the sizing table -----------------------------------------------------------------------


def report_sizing(
    per_site: float | None, commands: dict[str, dict[str, float]], per_cpu: float | None, ttl: float, keep: float
) -> None:
    kept_days = ttl + keep
    print(
        f"Sizing from these figures: records kept = sites/day x {kept_days:g} (ROBOTSTXT_CACHE_TTL {ttl:g} day + "
        f"ROBOTSTXT_FLEET_KEEP_AFTER_EXPIRY {keep:g} days)"
    )
    plain = next((v for k, v in commands.items() if "without" in k), None)
    paced = next((v for k, v in commands.items() if "with " in k), None)
    rows = []
    for sites_day in (10**5, 10**6, 10**7, 10**8):
        kept = sites_day * kept_days
        memory = f"{kept * per_site / 2**30:,.1f} GiB" if per_site else "-"
        per_s = sites_day / 86400
        cmds = f"{per_s * plain['site']:,.0f}" if plain else "-"
        rows.append([f"{sites_day:,}", f"{kept:,.0f}", memory, f"{per_s:,.1f}", cmds])
    print_table(["sites/day", "sites kept", "Redis memory", "new sites/s", "commands/s for the sites"], rows)
    if paced:
        print(
            f"  plus {paced['paced page']:.2f} commands per page of a Crawl-delay site (its reservation: "
            f"{1000 * paced['paced page']:,.0f}/s per 1,000 paced pages/s), and {paced['crawler-s']:.1f} polls/s "
            f"per crawler"
        )
    if per_cpu:
        print(f"  one Redis core: about {per_cpu:,.0f} reservations/s (a reservation per page of a Crawl-delay site)")
    print()


# -- main ------------------------------------------------------------------------------------


def tree_header(tree: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    code = "import scrapy_robots; print(scrapy_robots.__file__)"
    found = subprocess.run(
        [PYTHON, "-c", code], env=env, cwd=tempfile.gettempdir(), capture_output=True, text=True, check=True
    ).stdout.strip()
    commit = subprocess.run(
        ["git", "-C", str(tree), "log", "-1", "--format=%h %s"], capture_output=True, text=True
    ).stdout.strip()
    return f"tree {tree}: {commit[:100]}\ncrawls import scrapy_robots from {found}\n"


def sizes(text: str) -> list[int]:
    return [int(s.replace("_", "")) for s in text.split(",") if s.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--only", choices=["memory", "commands", "reserve"], action="append", help="run only this part")
    parser.add_argument("--crawl-sites", type=sizes, default=[2000, 10000], help="sites of each real crawl (memory)")
    parser.add_argument("--sites", type=sizes, default=[10000, 100000], help="sites of each save-path run (memory)")
    parser.add_argument("--cmd-sites", type=int, default=100, help="sites of the commands crawls (default 100)")
    parser.add_argument("--pages", type=int, default=10, help="pages per site of the commands crawls (default 10)")
    parser.add_argument("--crawlers", type=sizes, default=[1, 2, 4], help="processes of each reservation run")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each reservation run (default 10)")
    parser.add_argument("--crawl-timeout", type=float, default=600.0, help="bound of each crawl, s (default 600)")
    parser.add_argument("--ttl-days", type=float, default=1.0, help="ROBOTSTXT_CACHE_TTL, days (sizing)")
    parser.add_argument("--keep-days", type=float, default=2.0, help="ROBOTSTXT_FLEET_KEEP_AFTER_EXPIRY, days")
    parser.add_argument("--tree", type=Path, default=ROOT, help="run the crawls with PYTHONPATH=DIR (default: here)")
    parser.add_argument("--logs", type=Path, help="keep every crawl's log (at INFO) in this folder")
    args = parser.parse_args()
    if args.logs:
        args.logs.mkdir(parents=True, exist_ok=True)
        LOGS.append(args.logs.resolve())
    tree = args.tree.resolve()
    if not (tree / "scrapy_robots" / "__init__.py").is_file():
        parser.error(f"{tree} has no scrapy_robots/")
    parts = args.only or ["memory", "commands", "reserve"]
    print(tree_header(tree))

    server = RedisServer().start()
    client = redis.Redis.from_url(server.url)
    per_site: float | None = None
    commands: dict[str, dict[str, float]] = {}
    per_cpu: float | None = None
    try:
        if "memory" in parts:
            runs = []
            proxy = Proxy("corpus")
            try:
                env = environment(tree, proxy)
                for n in args.crawl_sites:
                    runs.append(crawl_memory(n, client, server.url, env, args.crawl_timeout))
                    print(f"  crawl of {n:,} sites: {runs[-1].used_per_site:,.0f} B/site", flush=True)
                for n in args.sites:
                    runs.append(save_memory(n, client, server.url, env, args.crawl_timeout))
                    print(f"  save path, {n:,} sites: {runs[-1].used_per_site:,.0f} B/site", flush=True)
            finally:
                proxy.stop()
            print()
            report_memory(runs)
            per_site = max(runs, key=lambda r: (r.sites, r.how == "save")).used_per_site
        if "commands" in parts:
            cmd_runs = [
                crawl_commands(title, mode, args.cmd_sites, args.pages, server, client, tree, args.crawl_timeout)
                for title, mode in (("without a Crawl-delay", "plain"), (f"with Crawl-delay: {CMD_DELAY:g}", "delay"))
            ]
            commands = report_commands(cmd_runs)
        if "reserve" in parts:
            env = {**os.environ, "PYTHONPATH": str(tree)}
            res_runs = [reservations(n, args.seconds, client, server.url, env) for n in args.crawlers]
            per_cpu = report_reservations(res_runs, args.seconds)
        report_sizing(per_site, commands, per_cpu, args.ttl_days, args.keep_days)
    finally:
        client.close()
        server.stop()


if __name__ == "__main__":
    main()
