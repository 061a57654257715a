"""Every shape a robots.txt answer takes on the wire is read without an ERROR: chunked,
close-delimited, HTTP/1.0, compressed with and without a length."""

from __future__ import annotations

import gzip

import pytest
import pytest_twisted
from crawling import crawl, stat
from servers import body, chunked, raw

ROBOTS = "User-agent: *\nDisallow: /private\n"
GZIPPED = gzip.compress(ROBOTS.encode())

SHAPES = {
    "content-length": body(ROBOTS),
    "chunked": chunked(ROBOTS),
    "chunked-gzip": chunked(ROBOTS, encoding="gzip"),
    "gzip-with-length": body(GZIPPED, headers={"Content-Encoding": "gzip"}),
    "close-delimited": raw(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n" + ROBOTS.encode()
    ),
    "close-delimited-gzip": raw(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Encoding: gzip\r\nConnection: close\r\n\r\n" + GZIPPED
    ),
    "http/1.0": raw(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n" + ROBOTS.encode()),
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest_twisted.ensureDeferred
async def test_rules_read_without_error(serve, shape):
    site = serve(SHAPES[shape])
    crawler = await crawl([f"{site.url}/public", f"{site.url}/private"], LOG_LEVEL="WARNING")
    assert crawler.spider.downloaded == [f"{site.url}/public"]
    assert crawler.spider.ignored == {f"{site.url}/private": "Forbidden by robots.txt"}
    assert stat(crawler, "log_count/ERROR") == 0
    assert stat(crawler, "robotstxt/policy/parse") == 1


@pytest_twisted.ensureDeferred
async def test_large_chunked_file_read_up_to_the_cap(serve):
    filler = "# " + "x" * 1000 + "\n"
    site = serve(chunked("User-agent: *\nDisallow: /private\n" + filler * 300 + "Disallow: /late\n", pieces=50))
    crawler = await crawl([f"{site.url}/public", f"{site.url}/private", f"{site.url}/late"], ROBOTSTXT_MAXSIZE=100_000)
    assert sorted(crawler.spider.downloaded) == [f"{site.url}/late", f"{site.url}/public"]
    assert stat(crawler, "robotstxt/truncated") == 1
    assert stat(crawler, "log_count/ERROR") == 0
