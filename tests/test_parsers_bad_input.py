"""No backend raises on bad bytes, and every real-world file of the corpus parses."""

from __future__ import annotations

import random

import pytest
from conftest import BACKENDS, backend_class

URLS = ["https://example.com/", "https://example.com/a/b?c=d", "https://example.com/%ZZ/\u00e9"]

BAD_BODIES = {
    "empty": b"",
    "only-bom": b"\xef\xbb\xbf",
    "binary-garbage": bytes(random.Random(9309).randrange(256) for _ in range(20_000)),
    "nul-bytes": b"User-agent: *\x00\nDisallow: /\x00x\n\x00\x00",
    "invalid-utf8": b"User-agent: *\nDisallow: /\xff\xfe\xc3(\n",
    "html-page": b"<!DOCTYPE html><html><head><title>Not found</title></head><body><p>Disallow: /</p></body></html>",
    "cr-only": b"User-agent: *\rDisallow: /x\rCrawl-delay: 1\r",
    "huge-5mb": b"User-agent: *\n" + b"Disallow: /private/path/segment/*/file$\n" * 130_000,
    "absurd-values": b"User-agent: *\nCrawl-delay: NaN\nRequest-rate: 0/0\nCrawl-delay: -1e999\n",
}


@pytest.mark.parametrize("name", BACKENDS)
@pytest.mark.parametrize("body", list(BAD_BODIES.values()), ids=list(BAD_BODIES))
def test_bad_body_never_raises(name, body):
    from scrapy_robots.parsers import DirectiveNotSupported

    parser = backend_class(name)(body, "FooBot")
    for url in URLS:
        assert isinstance(parser.allowed(url), bool)
    for call in (parser.crawl_delay, parser.request_rate, parser.sitemaps, parser.preferred_host):
        try:
            call()
        except DirectiveNotSupported:
            pass


def test_huge_body_is_really_parsed():
    # 5 MB of rules must not be silently dropped: the first rule applies.
    parser = backend_class("protego")(BAD_BODIES["huge-5mb"], "FooBot")
    assert not parser.allowed("https://example.com/private/path/segment/x/file")


@pytest.mark.parametrize("name", BACKENDS)
def test_html_page_allows_everything(name):
    # An HTML page has no robots.txt lines; none of its text may turn into a rule.
    parser = backend_class(name)(BAD_BODIES["html-page"], "FooBot")
    assert parser.allowed("https://example.com/anything")


@pytest.mark.parametrize("name", BACKENDS)
def test_corpus_parses_without_exception(name, corpus_files):
    from scrapy_robots.parsers import DirectiveNotSupported

    cls = backend_class(name)
    failures = []
    for path in corpus_files:
        try:
            parser = cls(path.read_bytes(), "FooBot")
            parser.allowed(f"https://{path.name}/some/page.html?x=1")
            try:
                parser.crawl_delay()
            except DirectiveNotSupported:
                pass
        except Exception as exc:
            failures.append(f"{path.name}: {exc!r}")
    assert not failures, f"{len(failures)} files raised:\n" + "\n".join(failures[:20])
    assert len(corpus_files) > 4000
