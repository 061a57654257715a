"""The robots.txt cache: TTL then one refetch, LRU eviction, HTTP lifetime headers."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sqlite3

import pytest
import pytest_twisted
from crawling import RecordingSpider, crawl, robots_middleware, stat
from scrapy import Request
from servers import body

from scrapy_robots.cache import MemoryRobotsStorage, RobotsCache, RobotsEntry, lifetime_from_headers, pack, unpack
from scrapy_robots.cache.hot import TEXT_RULES
from scrapy_robots.status.policy import Action

PROTEGO = "scrapy_robots.parsers.ProtegoParser"


class PacedSpider(RecordingSpider):
    """Sends its URLs one after the other, ``pause`` seconds apart."""

    pause = 0.6

    async def start(self):
        for url in self.urls:
            yield Request(url, callback=self.parse, errback=self.errback, dont_filter=True)
            await asyncio.sleep(self.pause)


@pytest_twisted.ensureDeferred
async def test_expired_entry_is_fetched_again_once(serve):
    answers = iter(["User-agent: *\nDisallow: /a\n", "User-agent: *\nDisallow: /b\n"])
    site = serve(lambda request: body(next(answers))(request))
    urls = [f"{site.url}/a", f"{site.url}/b", f"{site.url}/a", f"{site.url}/b"]
    crawler = await crawl(urls, spider_cls=PacedSpider, ROBOTSTXT_CACHE_TTL=1.0)
    # Requests 1-2 use the first file; the second fetch (after 1 s) forbids /b instead.
    assert site.robots_hits() == 2
    assert crawler.spider.downloaded == [f"{site.url}/b", f"{site.url}/a"]
    assert stat(crawler, "robotstxt/cache/expired") == 1


@pytest_twisted.ensureDeferred
async def test_least_recently_used_site_evicted(serve):
    a = serve(body("User-agent: *\nDisallow:\n"))
    b = serve(body("User-agent: *\nDisallow:\n"))
    crawler = await crawl(
        [f"{a.url}/1", f"{b.url}/1", f"{a.url}/2"],
        spider_cls=PacedSpider,
        ROBOTSTXT_CACHE_SIZE=1,
        ROBOTSTXT_CACHE_PARSED=1,
    )
    assert (a.robots_hits(), b.robots_hits()) == (2, 1)
    assert stat(crawler, "robotstxt/cache/evicted") == 2
    assert len(crawler.spider.downloaded) == 3


@pytest_twisted.ensureDeferred
async def test_more_sites_than_the_parsed_tier_holds_are_fetched_once(serve):
    # A backend that cannot reduce a file to one agent's rules (Protego) is kept whole,
    # for ROBOTSTXT_CACHE_PARSED sites.
    sites = [serve(body("User-agent: *\nDisallow: /private\n")) for _ in range(6)]
    # Interleaved as a broad crawl's frontier: every site, then every site again...
    urls = [f"{site.url}/{path}" for path in ("a", "b", "private", "c") for site in sites]
    crawler = await crawl(urls, ROBOTSTXT_CACHE_PARSED=2, CONCURRENT_REQUESTS=2, ROBOTSTXT_PARSER=PROTEGO)
    assert [site.robots_hits() for site in sites] == [1] * 6
    assert len(crawler.spider.downloaded) == 18
    assert set(crawler.spider.ignored) == {f"{site.url}/private" for site in sites}
    # Sites that left the parsed tier came back from the storage, parsed again.
    restored = stat(crawler, "robotstxt/cache/restored")
    assert restored > 0
    assert stat(crawler, "robotstxt/parsed") == 6 + restored
    # ... at once, in the request's own process_request: only the requests that met a
    # robots.txt in flight waited (each site's first, and any that came meanwhile).
    assert stat(crawler, "robotstxt/deferred") <= 24 - restored - stat(crawler, "robotstxt/cache/hit")
    assert stat(crawler, "robotstxt/deferred") >= 6


@pytest_twisted.ensureDeferred
async def test_every_site_is_parsed_once_whatever_the_parsed_tier(serve):
    # Our parser keeps what the crawl's agent obeys, for every site: no site parsed twice.
    sites = [serve(body("User-agent: *\nDisallow: /private\nCrawl-delay: 0.01\n")) for _ in range(6)]
    urls = [f"{site.url}/{path}" for path in ("a", "b", "private", "c") for site in sites]
    crawler = await crawl(urls, ROBOTSTXT_CACHE_PARSED=1, CONCURRENT_REQUESTS=2)
    assert [site.robots_hits() for site in sites] == [1] * 6
    assert len(crawler.spider.downloaded) == 18
    assert set(crawler.spider.ignored) == {f"{site.url}/private" for site in sites}
    assert stat(crawler, "robotstxt/parsed") == 6
    assert stat(crawler, "robotstxt/cache/restored") == 0
    assert stat(crawler, "robotstxt/crawl_delay/sites") == 6


@pytest.mark.parametrize("count", [40, TEXT_RULES + 1])
@pytest_twisted.ensureDeferred
async def test_sites_past_the_compiled_bound_are_never_parsed_again(serve, count):
    # ROBOTSTXT_CACHE_PARSED=1 compiles 64 rules at once: only the site asked last stays
    # compiled. The others keep their rules as text (up to TEXT_RULES rules) and compile
    # them again when asked, or leave and come back from the rules stored beside their
    # body. Never a second parse, never a second fetch.
    rules = "".join(f"Disallow: /private{i}/\n" for i in range(count - 1))
    sites = [serve(body(f"User-agent: *\n{rules}Disallow: /private\n")) for _ in range(4)]
    urls = [f"{site.url}/{path}" for path in ("a", "b", "private", "c") for site in sites]
    crawler = await crawl(urls, ROBOTSTXT_CACHE_PARSED=1, CONCURRENT_REQUESTS=1)
    assert [site.robots_hits() for site in sites] == [1] * 4
    assert set(crawler.spider.ignored) == {f"{site.url}/private" for site in sites}
    assert len(crawler.spider.downloaded) == 12
    assert stat(crawler, "robotstxt/parsed") == 4
    restored = stat(crawler, "robotstxt/cache/restored")
    # Rules past TEXT_RULES come back from the storage when their site comes back, at most
    # once a request (not when the site is the one still compiled).
    assert (restored == 0) if count <= TEXT_RULES else (0 < restored <= 12), restored


@pytest_twisted.ensureDeferred
async def test_cache_control_shortens_lifetime(serve):
    site = serve(body("User-agent: *\nDisallow:\n", headers={"Cache-Control": "max-age=0"}))
    crawler = await crawl([f"{site.url}/1"], spider_cls=PacedSpider)
    entry = robots_middleware(crawler).cache.get(f"http://{site.host}:{site.port}")
    assert 59 <= entry.expires_at - entry.fetched_at <= 61  # never below a minute


def test_lifetime_from_headers():
    from scrapy.http.headers import Headers

    day = 86400.0
    assert lifetime_from_headers(Headers({}), day, 0) == day
    assert lifetime_from_headers(Headers({"Cache-Control": "public, max-age=3600"}), day, 0) == 3600
    assert lifetime_from_headers(Headers({"Cache-Control": "max-age=999999"}), day, 0) == day
    assert lifetime_from_headers(Headers({"Expires": "Thu, 01 Jan 1970 02:00:00 GMT"}), day, 0) == 7200
    assert lifetime_from_headers(Headers({"Expires": "garbage"}), day, 0) == day


def test_memory_storage_is_bounded_lru():
    evicted = []
    storage = MemoryRobotsStorage(max_entries=2, on_evict=evicted.append)
    for site in ("a", "b"):
        storage.put(RobotsEntry(site=site, action=Action.ALLOW, fetched_at=0, expires_at=20))
    assert storage.get("a") is not None  # "a" is now the most recent
    storage.put(RobotsEntry(site="c", action=Action.ALLOW, fetched_at=0, expires_at=5))
    assert evicted == ["b"]
    assert storage.get("b") is None
    assert len(storage) == 2


def test_both_tiers_are_bounded_lru():
    # Light entries (no parser kept) up to max_light, heavy ones (a whole parser) up to max_entries.
    cache = RobotsCache(max_entries=2, max_light=2)
    for site in ("a", "b"):
        cache.put(RobotsEntry(site=site, action=Action.ALLOW, fetched_at=0, expires_at=20))
    assert cache.get("a") is not None
    cache.put(RobotsEntry(site="c", action=Action.ALLOW, fetched_at=0, expires_at=5))
    assert "b" not in cache and "a" in cache and "c" in cache
    for site in ("d", "e", "f"):
        cache.put(RobotsEntry(site=site, action=Action.PARSE, fetched_at=0, expires_at=20, parser=object()))
    assert "d" not in cache and "e" in cache and "f" in cache and len(cache) == 4
    # A site whose entry changes weight moves: never in both tiers.
    cache.put(RobotsEntry(site="a", action=Action.PARSE, fetched_at=0, expires_at=20, parser=object()))
    assert len(cache) == 3 and "a" in cache and "c" in cache and "e" not in cache


def test_packed_entry_keeps_every_field_and_the_body():
    entry = RobotsEntry(
        site="https://example.com:443",
        action=Action.PARSE,
        fetched_at=1.5,
        expires_at=2.5,
        status=200,
        url="https://example.com/robots.txt",
        redirects=1,
        size=3,
        truncated=True,
        error=None,
        failures=0,
        unreachable_since=None,
        body=b"User-agent: *\nDisallow: /\0\xff\n",
    )
    blob = pack(entry)
    assert unpack(blob) == entry and unpack(blob).body == entry.body
    assert len(blob) < 200


def test_an_empty_robots_txt_is_kept_as_a_body():
    # An empty file parses to "allow all"; stored without its body it would be fetched again.
    entry = RobotsEntry(site="http://a:80", action=Action.PARSE, fetched_at=0, expires_at=1, body=b"")
    assert unpack(pack(entry)).body == b""
    assert unpack(pack(RobotsEntry(site="http://a:80", action=Action.ALLOW, fetched_at=0, expires_at=1))).body is None


@pytest_twisted.ensureDeferred
async def test_a_resumed_jobdir_crawl_fetches_no_robots_txt_again(serve, tmp_path):
    sites = [serve(body("User-agent: *\nDisallow: /private\n")) for _ in range(3)]
    jobdir = str(tmp_path / "job")
    first = await crawl([f"{site.url}/a" for site in sites], ROBOTSTXT_CACHE_PARSED=1, JOBDIR=jobdir)
    assert stat(first, "robotstxt/request_count") == 3
    # Another crawl of the same job (new pages: the dupefilter remembers the old ones).
    second = await crawl([f"{site.url}/{path}" for site in sites for path in ("b", "private")], JOBDIR=jobdir)
    assert [site.robots_hits() for site in sites] == [1, 1, 1]
    assert stat(second, "robotstxt/request_count") == 0
    assert stat(second, "robotstxt/cache/restored") == 3
    assert len(second.spider.downloaded) == 3 and len(second.spider.ignored) == 3
    # Restored from the rules stored beside each body, not by parsing the bodies (#21).
    assert stat(first, "robotstxt/parsed") == 3
    assert stat(second, "robotstxt/parsed") == 0


@pytest_twisted.ensureDeferred
async def test_a_stored_entry_of_another_parser_is_parsed_once_and_kept(serve, tmp_path):
    # Rules stored by one parser and agent are not another's: a crawl with other options
    # parses the stored body once, and the next crawl with those options parses nothing.
    sites = [serve(body("User-agent: *\nDisallow: /private\nAllow: /private/ok\n")) for _ in range(2)]
    jobdir = str(tmp_path / "job")
    await crawl([f"{site.url}/a" for site in sites], JOBDIR=jobdir)
    urls = [f"{site.url}/private/ok" for site in sites]
    first_match = {"ROBOTSTXT_RFC9309_PRECEDENCE": "first", "JOBDIR": jobdir}
    second = await crawl(urls, **first_match)
    # Under "first" precedence, Disallow: /private (the earlier line) wins.
    assert len(second.spider.ignored) == 2
    assert stat(second, "robotstxt/parsed") == 2
    third = await crawl([url + "?again" for url in urls], **first_match)
    assert len(third.spider.ignored) == 2
    assert stat(third, "robotstxt/parsed") == 0
    assert [site.robots_hits() for site in sites] == [1, 1]


@pytest_twisted.ensureDeferred
async def test_rules_stored_before_names_kept_their_digits_are_not_applied(serve, tmp_path):
    # Before issue #30, "Ai2Bot-Dolma" read as "ai" and obeyed AI2Bot's group too: its
    # stored rules (merged, "Allow: /" winning) are keyed as options were then, and a crawl
    # now parses the stored body again rather than apply them.
    agent = "Mozilla/5.0 (compatible; Ai2Bot-Dolma/1.0; +https://www.allenai.org/crawler)"
    site = serve(body("User-agent: Ai2Bot-Dolma\nDisallow: /\n\nUser-agent: AI2Bot\nAllow: /\n"))
    jobdir = tmp_path / "job"
    await crawl([f"{site.url}/a"], JOBDIR=str(jobdir), USER_AGENT=agent)
    old_key = f"RFC9309Parser|longest,1,ignore,token|{agent}"
    merged = '["agent-rules/1","longest",true,"ignore",null,null]\nD/\nA/'
    with sqlite3.connect(jobdir / "robotstxt.sqlite3") as db:
        ((site_key, record),) = db.execute("SELECT site, record FROM robots").fetchall()
        db.execute("UPDATE robots SET record = ? WHERE site = ?", (record_with(record, {old_key: merged}), site_key))
    db.close()
    again = await crawl([f"{site.url}/b"], JOBDIR=str(jobdir), USER_AGENT=agent)
    assert list(again.spider.ignored) == [f"{site.url}/b"]
    assert stat(again, "robotstxt/request_count") == 0
    assert stat(again, "robotstxt/parsed") == 1


def record_with(record: str, agents: dict[str, str]) -> str:
    fields = json.loads(record)
    fields["agents"] = agents
    return json.dumps(fields)


@pytest_twisted.ensureDeferred
async def test_a_resumed_crawl_says_what_it_restored(serve, tmp_path, caplog):
    # Issue #20 item 14: one INFO line per site restored from a previous run, the same
    # crawl_delay stats as a fresh crawl, and retries not also counted as expired.
    paced = serve(body("User-agent: *\nCrawl-delay: 0.2\nDisallow: /private\n"))
    denied = serve(body("no", status=403))
    down = serve(body("overloaded", status=503))
    jobdir = str(tmp_path / "job")
    settings = {"JOBDIR": jobdir, "ROBOTSTXT_UNREACHABLE_RETRY_TIMES": 0, "ROBOTSTXT_UNREACHABLE_RETRY_DELAY": 60}
    first = await crawl([f"{site.url}/a" for site in (paced, denied, down)], **settings)
    assert stat(first, "robotstxt/crawl_delay/sites") == 1
    caplog.clear()
    caplog.set_level(logging.INFO, logger="scrapy_robots")
    second = await crawl([f"{site.url}/b" for site in (paced, paced, denied, down)], **settings)
    assert stat(second, "robotstxt/request_count") == 0
    lines = sorted(r.getMessage() for r in caplog.records if "restored from storage" in r.getMessage())
    assert len(lines) == 3, lines
    paced_line, denied_line, down_line = (
        next(line for line in lines if f"robots.txt for http://{site.host}:{site.port} " in line)
        for site in (paced, denied, down)
    )
    assert "HTTP 200 -> parse" in paced_line and "crawl-delay 0.2s" in paced_line, paced_line
    assert "HTTP 403 -> deny" in denied_line, denied_line
    assert "HTTP 503 -> unreachable" in down_line and "(stored schedule)" in down_line, down_line
    # 60 s after the first crawl's attempt, less the time since.
    assert 50 <= int(re.search(r"next attempt in (\d+)s", down_line)[1]) <= 60, down_line
    assert stat(second, "robotstxt/crawl_delay/sites") == 1
    assert stat(second, "robotstxt/crawl_delay/max") == 0.2


@pytest_twisted.ensureDeferred
async def test_a_retry_is_not_counted_as_expired(serve):
    site = serve(body("overloaded", status=503))
    crawler = await crawl([f"{site.url}/a"], ROBOTSTXT_UNREACHABLE_RETRY_TIMES=2, ROBOTSTXT_UNREACHABLE_RETRY_DELAY=0.1)
    assert site.robots_hits() == 3
    assert stat(crawler, "robotstxt/retry") == 2
    assert stat(crawler, "robotstxt/cache/miss") == 1
    assert stat(crawler, "robotstxt/cache/expired") == 0


@pytest_twisted.ensureDeferred
async def test_without_jobdir_nothing_is_written_to_disk(serve, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    site = serve(body("User-agent: *\nDisallow: /private\n"))
    crawler = await crawl([f"{site.url}/a"])
    assert type(robots_middleware(crawler).storage) is MemoryRobotsStorage
    assert list(tmp_path.iterdir()) == []


@pytest_twisted.ensureDeferred
async def test_a_corrupt_jobdir_cache_is_rebuilt_and_the_crawl_goes_on(serve, tmp_path, caplog):
    site = serve(body("User-agent: *\nDisallow: /private\n"))
    jobdir = tmp_path / "job"
    jobdir.mkdir()
    (jobdir / "robotstxt.sqlite3").write_bytes(b"SQLite format 3\0" + b"\x07" * 4000)
    crawler = await crawl([f"{site.url}/a", f"{site.url}/private"], JOBDIR=str(jobdir))
    assert crawler.spider.downloaded == [f"{site.url}/a"]
    assert crawler.spider.ignored == {f"{site.url}/private": "Forbidden by robots.txt"}
    assert len([r for r in caplog.records if "is not usable" in r.getMessage()]) == 1
    assert stat(crawler, "log_count/ERROR") == 0
    assert stat(crawler, "robotstxt/cache/storage_errors") == 1


def _rules_entry(site: str, rules: int) -> RobotsEntry:
    from scrapy_robots.rfc9309 import RobotsTxt

    body = "User-agent: *\n" + "".join(f"Disallow: /{site}/{i}\n" for i in range(rules))
    agent_rules, _ = RobotsTxt.parse(body).agent_rules("bot")
    return RobotsEntry(site=site, action=Action.PARSE, fetched_at=0, expires_at=9, rules=agent_rules)


def test_the_compiled_rules_are_bounded_by_their_number_and_the_rules_stay():
    # ROBOTSTXT_CACHE_PARSED x RULES_PER_PARSER rules compiled at once, least recently
    # used released first; a released site stays in the cache, its rules as text.
    # A site's rules are compiled and kept from the second time it is asked.
    entry = _rules_entry
    cache = RobotsCache(max_entries=2, max_light=10)  # 128 rules compiled at once
    a, b, c = entry("a", 60), entry("b", 60), entry("c", 60)
    for each in (a, b, c):
        cache.put(each)  # fetched: asked once
    assert not any(each.rules.compiled for each in (a, b, c))
    assert cache.get("a") is a and cache.get("b") is b  # asked again: admitted
    assert a.rules.compiled and b.rules.compiled
    cache.get("c")  # 180 rules: a's are released
    assert not a.rules.compiled and b.rules.compiled and c.rules.compiled
    assert all(site in cache for site in "abc") and len(cache) == 3
    assert a.rules.allowed("/b/1") and not a.rules.allowed("/a/1")  # from the text
    cache.get("a")  # released, asked once more: answers compiled, admitted when asked again
    assert cache.get("a") is a and a.rules.compiled and not b.rules.compiled
    huge = entry("huge", 1000)  # past TEXT_RULES, asked once: it answers and is not kept
    cache.put(huge)
    assert "huge" not in cache
    cache.put(huge)  # back from the storage, asked again: admitted, past the bound alone
    assert huge.rules.compiled and not any(e.rules.compiled for e in (a, c)) and len(cache) == 4
    # A whole parser weighs RULES_PER_PARSER, and leaves with its entry, as do rules
    # past TEXT_RULES (they come back from the storage).
    parsed = RobotsEntry(site="p", action=Action.PARSE, fetched_at=0, expires_at=9, parser=object())
    cache.put(parsed)
    assert "huge" not in cache and "p" in cache
    d = entry("d", TEXT_RULES + 1)
    cache.put(d)  # asked once: it answers the request that brought it, and is not kept
    assert "d" not in cache and "p" in cache
    cache.put(d)  # asked again (restored from the storage): admitted
    assert "p" not in cache and "d" in cache and d.rules.compiled and len(cache) == 4


def test_an_interleaved_frontier_larger_than_the_compiled_bound_keeps_nothing_compiled():
    # A broad crawl asks every site before any site again. Kept on their first ask,
    # compiled rules would be pushed out before their site comes back: compiled for
    # nothing, each living long enough to reach the garbage collector's oldest generation.
    # Past what the bound can hold, a site's rules answer the question and are released.
    cache = RobotsCache(max_entries=1, max_light=1000)  # 64 rules: 8 sites of 5 rules
    assert cache.max_seen == 8
    for sites, kept in ((8, 8), (20, 0)):
        entries = [_rules_entry(f"s{sites}-{i}", 5) for i in range(sites)]
        for each in entries:
            cache.put(each)
        for _ in range(3):
            for each in entries:
                assert cache.get(each.site) is each
                assert not each.rules.allowed(f"/{each.site}/1") and each.rules.allowed("/other")
        # The last one asked answers compiled until the next question, kept or not.
        compiled = sum(each.rules.compiled for each in entries[:-1])
        assert compiled == kept - 1 if kept else compiled == 0, (sites, compiled)
        assert all(each.site in cache for each in entries)


@pytest_twisted.ensureDeferred
async def test_the_site_memo_keeps_its_first_sites_under_an_interleaved_frontier(serve, monkeypatch):
    # A broad crawl's frontier visits every site before any site again: a memo of site keys
    # that started over when full (or forgot its oldest) would miss on every request once
    # the crawl has more sites than it holds. It keeps the first it met instead.
    import scrapy_robots.policyfiles.book

    computed = []

    def counting_site_of(request):
        computed.append(request.url)
        return site_of(request)

    site_of = scrapy_robots.policyfiles.book.site_of
    monkeypatch.setattr(scrapy_robots.policyfiles.book, "SITE_MEMO", 2)
    monkeypatch.setattr(scrapy_robots.policyfiles.book, "site_of", counting_site_of)
    sites = [serve(body("User-agent: *\nDisallow: /private\n")) for _ in range(4)]
    urls = [f"{site.url}/{path}" for path in ("a", "b", "private") for site in sites]
    crawler = await crawl(urls, CONCURRENT_REQUESTS=1)
    assert len(crawler.spider.downloaded) == 8
    assert set(crawler.spider.ignored) == {f"{site.url}/private" for site in sites}
    # The first two sites' keys are computed once; the two past the memo's bound, on each request.
    first, second = (urls[0].rsplit("/", 1)[0], urls[1].rsplit("/", 1)[0])
    assert sum(url.startswith((first + "/", second + "/")) for url in computed) == 2
    assert len(computed) == 2 + 2 * 3
