"""What a site costs in the fleet's Redis (#42): bytes per site of every key a real fleet
crawl of corpus sites leaves, an earlier version's record still read, no lock left behind
after a crawl ends (normally or by Ctrl-C), and a request on a ready site never touching
the packed form."""

from __future__ import annotations

import json
import time

import pytest
import pytest_twisted
import redis as redis_py
from crawling import crawl, stat
from fleet import start_crawler
from servers import body
from twisted.internet import reactor
from twisted.internet.task import deferLater
from twisted.web.resource import Resource
from twisted.web.server import Site

from scrapy_robots.cache import entry as entry_module

# A fleet crawl on a real clock: run at the normal CPU priority under `make test`.
pytestmark = pytest.mark.timing

PREFIX = "scrapy_robots:fleetbot:"
SAMPLE = 300  # corpus sites crawled: every 14th file of the 4,231
PAGE = b"<!doctype html><html><body><p>page</p></body></html>"


class CorpusSites(Resource):
    """One loopback port per site, its robots.txt a corpus file; any other path a small page."""

    isLeaf = True

    def __init__(self, bodies: dict[int, bytes]):
        super().__init__()
        self.bodies = bodies
        self.robots_hits: dict[int, int] = {}

    def render_GET(self, request):
        port = request.getHost().port
        if request.path == b"/robots.txt":
            self.robots_hits[port] = self.robots_hits.get(port, 0) + 1
            request.setHeader(b"Content-Type", b"text/plain")
            return self.bodies[port]
        request.setHeader(b"Content-Type", b"text/html")
        return PAGE


def serve_corpus(files) -> tuple[CorpusSites, list]:
    resource = CorpusSites({})
    ports = []
    for path in files:
        port = reactor.listenTCP(0, Site(resource), interface="127.0.0.1")
        resource.bodies[port.getHost().port] = path.read_bytes()
        ports.append(port)
    return resource, ports


def key_families(url: str) -> dict[str, tuple[int, int]]:
    """(keys, MEMORY USAGE bytes) per family of the robots.txt layer's keys."""
    client = redis_py.Redis.from_url(url)
    families: dict[str, list[int]] = {}
    try:
        for key in client.scan_iter(match=f"{PREFIX}*", count=1000):
            name = key.decode()
            if name.endswith(":lock"):
                family = "lock"
            elif "/.well-known/tdmrep.json" in name:
                family = "tdmrep"
            elif name.startswith((f"{PREFIX}site:", f"{PREFIX}robots:")):
                family = "record"
            elif name.startswith(f"{PREFIX}slotpace:"):
                family = "pace"
            else:
                family = "other"
            families.setdefault(family, []).append(client.memory_usage(key, samples=0) or 0)
    finally:
        client.close()
    return {family: (len(sizes), sum(sizes)) for family, sizes in families.items()}


def used_memory(url: str) -> int:
    """INFO memory's used_memory."""
    client = redis_py.Redis.from_url(url)
    try:
        return int(client.info("memory")["used_memory"])
    finally:
        client.close()


def others_usage(url: str) -> int:
    """MEMORY USAGE of the keys that are not the robots.txt layer's (scrapy-redis's queue...)."""
    client = redis_py.Redis.from_url(url)
    try:
        return sum(
            client.memory_usage(key, samples=0) or 0
            for key in client.scan_iter(count=1000)
            if not key.decode().startswith(PREFIX)
        )
    finally:
        client.close()


@pytest_twisted.ensureDeferred
async def test_a_site_costs_at_most_1200_bytes_of_redis(redis, corpus_files):
    files = corpus_files[::14][:SAMPLE]
    sites, ports = serve_corpus(files)
    try:
        urls = [f"http://127.0.0.1:{port.getHost().port}/page" for port in ports]
        handle = start_crawler(
            urls,
            redis.url,
            CONCURRENT_REQUESTS=64,
            DOWNLOAD_DELAY_JITTER=0,
            ROBOTSTXT_MAX_CRAWL_DELAY=0.2,  # every site still paced (its slot's key), briefly
            ROBOTSTXT_FLEET_LOCK_TTL=30,
        )
        result = await handle.done
        assert result["exit"] == 0, result["log"][-3000:]
        assert result["failed"] == {}, result["failed"]
        assert all(hits == 1 for hits in sites.robots_hits.values()) and len(sites.robots_hits) == len(files)
        families = key_families(redis.url)
        ours = sum(size for _, size in families.values())
        # What the keys hold: used_memory before and after a FLUSHALL (the server's other
        # allocations, about 0.5 MB after a crawl's clients and scripts, stay), less the
        # keys that are not ours (scrapy-redis's queue and dupefilter).
        others = others_usage(redis.url)
        held = used_memory(redis.url)
        redis.flush()
        delta = held - used_memory(redis.url) - others
    finally:
        for port in ports:
            port.stopListening()
    per_site = ours / len(files)
    report = {family: (count, round(size / len(files))) for family, (count, size) in families.items()}
    print(f"bytes per site: {per_site:.0f} (MEMORY USAGE), {delta / len(files):.0f} (used_memory delta); {report}")
    assert "lock" not in families, families  # none left behind by a crawl that ended
    assert families["record"][0] == len(files)
    # Main: about 6,300 B a site (a hash of the JSON meta and the raw body).
    assert per_site <= 1200, report
    assert delta / len(files) <= 1200, (delta / len(files), report)


def old_record(site: str, body_text: bytes) -> dict[str, bytes]:
    """A record as main wrote it (before #42): the hash of ``meta`` (JSON) and ``body``."""
    now = time.time()
    meta = {
        "site": site,
        "action": "parse",
        "fetched_at": now,
        "expires_at": now + 3600,
        "status": 200,
        "url": f"{site}/robots.txt",
        "redirects": 0,
        "size": len(body_text),
        "truncated": False,
        "error": None,
        "failures": 0,
        "unreachable_since": None,
        "retry_after": None,
        "content_type": "text/plain",
        "schedule_end": None,
        "version": None,
        "version_fetched_at": None,
    }
    return {"meta": json.dumps(meta).encode(), "body": body_text}


@pytest_twisted.ensureDeferred
async def test_an_earlier_versions_record_is_read_without_a_fetch(serve, redis):
    site = serve(body("User-agent: *\nDisallow: /private\n"))
    client = redis_py.Redis.from_url(redis.url)
    key = f"{PREFIX}robots:{site.url}"
    # The old record says otherwise than the live file: what the crawl obeys shows which it read.
    client.hset(key, mapping=old_record(site.url, b"User-agent: *\nDisallow: /old\n"))
    client.pexpire(key, 3_600_000)
    client.close()
    urls = [f"{site.url}/private", f"{site.url}/old"]
    crawler = await crawl(
        urls,
        BOT_NAME="fleetbot",
        ROBOTSTXT_CACHE_STORAGE="scrapy_robots.fleet.RedisRobotsStorage",
        ROBOTSTXT_REDIS_URL=redis.url,
    )
    assert site.robots_hits() == 0
    assert stat(crawler, "robotstxt/fleet/hit") == 1
    assert crawler.spider.downloaded == [f"{site.url}/private"]
    assert crawler.spider.ignored == {f"{site.url}/old": "Forbidden by robots.txt"}


@pytest_twisted.ensureDeferred
async def test_no_lock_left_after_a_crawl_ends_or_is_interrupted(serve, redis):
    slow = {"n": 0}

    def robots(request):
        slow["n"] += 1
        return b"User-agent: *\nDisallow: /private\n"

    quick = [serve(body("User-agent: *\nDisallow: /private\n")) for _ in range(3)]
    # Sites whose robots.txt never answers: their fetches are in flight at the Ctrl-C.
    from servers import hang

    hung = [serve(hang()) for _ in range(3)]
    # A crawl that ends by itself, then one stopped by Ctrl-C while it holds the hung sites' locks.
    done = await start_crawler([f"{s.url}/p" for s in quick], redis.url).done
    assert done["exit"] == 0, done["log"][-3000:]
    assert "lock" not in key_families(redis.url)
    handle = start_crawler([f"{s.url}/p" for s in hung + quick], redis.url, ROBOTSTXT_FLEET_LOCK_TTL=60)
    deadline = time.monotonic() + 30
    while sum(s.robots_hits() for s in hung) < 3 and time.monotonic() < deadline:
        await deferLater(reactor, 0.1, lambda: None)
    assert key_families(redis.url).get("lock", (0, 0))[0] == 3  # held while the fetches hang
    handle.signal("INT")
    result = await handle.done
    assert "Traceback" not in result["log"], result["log"][-3000:]
    # A regression guard: main gives these back too (the 6 locks #42 saw left at 4,231 sites
    # were not reproduced here); a close now also gives back every lock still held.
    assert "lock" not in key_families(redis.url), key_families(redis.url)


@pytest_twisted.ensureDeferred
async def test_a_request_on_a_ready_site_never_unpacks(serve, redis, monkeypatch):
    site = serve(body("User-agent: *\nDisallow: /private\n"))
    calls = {"unpack": 0, "pack": 0}
    real_unpack, real_pack = entry_module.unpack, entry_module.pack

    def counting_unpack(blob):
        calls["unpack"] += 1
        return real_unpack(blob)

    def counting_pack(entry):
        calls["pack"] += 1
        return real_pack(entry)

    import scrapy_robots.cache.storage as cache_storage
    import scrapy_robots.fleet.storage as fleet_storage

    for module in (cache_storage, fleet_storage):
        monkeypatch.setattr(module, "unpack", counting_unpack)
        monkeypatch.setattr(module, "pack", counting_pack, raising=False)

    async def run(pages: int) -> dict[str, int]:
        calls.update(unpack=0, pack=0)
        await crawl(
            [f"{site.url}/p{i}" for i in range(pages)],
            ROBOTSTXT_CACHE_STORAGE="scrapy_robots.fleet.RedisRobotsStorage",
            ROBOTSTXT_REDIS_URL=redis.url,
        )
        redis.flush()
        return dict(calls)

    # As many packs and unpacks for 40 pages as for 120 (one for the requests parked while
    # robots.txt was fetched): none per request once the site is ready.
    few, many = await run(40), await run(120)
    assert few["pack"] == many["pack"] and few["unpack"] <= 1 and many["unpack"] <= 1, (few, many)
