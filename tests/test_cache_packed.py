"""The packed form of an entry (memory tier, Redis): one zlib stream with a frozen preset
dictionary, and a body that states no robots.txt line kept empty."""

from __future__ import annotations

import hashlib
import statistics
import time

import pytest
import pytest_twisted
from conftest import BACKENDS, backend_class
from crawling import crawl, stat
from servers import body

from scrapy_robots.cache import RobotsEntry, pack, unpack
from scrapy_robots.cache._zdict import DICTIONARY_1
from scrapy_robots.decoding import normalize_robotstxt
from scrapy_robots.parsers.rfc9309 import RFC9309Parser
from scrapy_robots.policyfiles.reader import states_no_rules
from scrapy_robots.status.policy import Action

HTML = b"<!doctype html>\n<html><head><title>Not found</title></head>\n<body><p>Sorry: no page.</p></body></html>\n"


def test_the_dictionary_never_changes():
    # A stored entry names its dictionary by its first byte: these bytes are frozen.
    assert hashlib.sha256(DICTIONARY_1).hexdigest() == (
        "867eb9af11936570456903caac297b44041c62275c2cc6889e073c0c90247754"
    )


@pytest.mark.parametrize(
    "fields",
    [
        {"body": None},
        {"body": b""},
        {"body": b"User-agent: *\nDisallow: /x\n", "agents": {"rfc9309|k|Bot": '["agent-rules/1"]'}},
        {"body": b"", "body_dropped": True, "size": 4096, "version": "ab" * 32, "version_fetched_at": 5.0},
        {"body": b"\0\xff binary\0", "retry_after": 0.0, "failures": 2, "error": "DNS lookup failed"},
    ],
)
def test_pack_round_trip(fields):
    entry = RobotsEntry(site="https://a.example:443", action=Action.PARSE, fetched_at=1.5, expires_at=2.5, **fields)
    again = unpack(pack(entry))
    assert again == entry
    assert (again.body, again.agents) == (entry.body, entry.agents)


def test_pack_refuses_what_it_did_not_write():
    packed = pack(RobotsEntry(site="s", action=Action.ALLOW, fetched_at=1.0, expires_at=2.0))
    for bad in (b"", b"[]\0", packed[:-3], b"\x02" + packed[1:], packed[:1] + b"junk"):
        with pytest.raises(ValueError):
            unpack(bad)


def test_a_corpus_site_packs_in_about_600_bytes(corpus_files):
    now = time.time()
    sizes = []
    for index, path in enumerate(corpus_files):
        text = normalize_robotstxt(path.read_bytes(), b"text/plain")
        site = f"https://www{index}.example.com"
        kept = b"" if states_no_rules(text) else text
        form = RFC9309Parser(kept, "FleetBot").reduce("FleetBot")
        assert form is not None
        entry = RobotsEntry(
            site=site,
            action=Action.PARSE,
            fetched_at=now,
            expires_at=now + 86400,
            status=200,
            url=f"{site}/robots.txt",
            size=len(text),
            content_type="text/plain",
            body=kept,
            body_dropped=kept != text,
            agents={"rfc9309|longest,1,allow,lenient,1|FleetBot": form[1]},
        )
        sizes.append(len(pack(entry)))
    # Main packed 1,163 B a site (record apart, zlib without dictionary, every body kept).
    assert statistics.mean(sizes) < 650, statistics.mean(sizes)


def test_bodies_without_a_robots_txt_line_read_as_empty_by_every_backend(corpus_files):
    dropped = [p for p in corpus_files if states_no_rules(normalize_robotstxt(p.read_bytes(), b"text/plain"))]
    # The corpus's HTML pages served as robots.txt and the like (main kept them whole).
    assert 150 <= len(dropped) <= 300, len(dropped)
    urls = ["https://a.example/", "https://a.example/a/page.html?q=1", "https://a.example/wp-admin/x"]
    for name in BACKENDS:
        try:
            cls = backend_class(name)
            empty = cls(b"", "FleetBot")
        except Exception:  # pragma: no cover - a backend not installed
            continue
        for path in dropped:
            parser = cls(normalize_robotstxt(path.read_bytes(), b"text/plain"), "FleetBot")
            for url in urls:
                assert parser.allowed(url, "FleetBot") == empty.allowed(url, "FleetBot"), (name, path.name, url)


def test_a_robots_txt_line_keeps_the_body():
    assert states_no_rules(HTML)
    assert states_no_rules(b"# nothing but a comment\n\n")
    for line in (b"User-agent: *", b"useragent: x", b"Disallow /x", b"sitemap: /s.xml", b"Content-Usage: train-ai=n"):
        assert not states_no_rules(HTML + line + b"\n"), line


@pytest_twisted.ensureDeferred
async def test_an_html_robots_txt_is_kept_empty_and_the_spider_downloads_it(serve):
    site = serve(body(HTML, headers={"Content-Type": "text/html"}))
    urls = [f"{site.url}/p", f"{site.url}/robots.txt"]
    crawler = await crawl(urls)
    # Allowed as with the body, the spider's own request downloaded for real (not served empty).
    assert sorted(crawler.spider.downloaded) == sorted(urls)
    assert stat(crawler, "robotstxt/not_served/not_stored") == 1
    assert site.robots_hits() == 2
