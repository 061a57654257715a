"""RSL named by a page (issue #50; RSL 1.0 4.5 and 4.6): a ``Link: <...>; rel="license";
type="application/rsl+xml"`` header field or a ``<link rel="license"
type="application/rsl+xml">`` in the head locates the site's license when its robots.txt
names none. Real crawls through the add-on against real servers: the page's items obeyed
by the license's answer for it, the site's later requests judged by it before download,
the document fetched once; what a page links to beside robots.txt's line, or without
RSL's media type, is not read; the record's page row and ``scrapy robots --page`` agree
with the crawl."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest_twisted
from crawling import crawl, stat
from scrapy import Request
from servers import body, body_later, sequence
from test_command_page import answers
from test_usage_crawl import ItemSpider

from scrapy_robots.record.reader import Record

FILES = Path(__file__).resolve().parent / "rsl_files"
LICENSE = "/license.xml"
ROBOTS = "User-agent: *\nDisallow: /private\n"
LINK = f'<{LICENSE}>; rel="license"; type="application/rsl+xml"'
HEAD = f'<link rel="license" type="application/rsl+xml" href="{LICENSE}">'
ADDON = {"scrapy_robots.Addon": 0}


def xml(name: str) -> str:
    return (FILES / name).read_text()


def html(head: str = "", links: tuple[str, ...] = (), headers: dict[str, str] | None = None):
    """An HTML page: ``head`` in its head, an anchor to each of ``links``, ``headers`` sent."""
    anchors = "".join(f'<a href="{link}">{link}</a>' for link in links)
    text = f"<html><head>{head}</head><body>{anchors}</body></html>"
    return body(text, headers={"Content-Type": "text/html", **(headers or {})})


class LinkSpider(ItemSpider):
    """test_usage_crawl's spider (one item per page, the preferences recorded) that also
    follows the page's anchors."""

    name = "links"

    def parse(self, response):
        yield from super().parse(response)
        for href in response.css("a::attr(href)").getall():
            yield Request(response.urljoin(href), callback=self.parse, errback=self.errback)


async def link_crawl(urls, **settings):
    settings.setdefault("ROBOTSTXT_USAGE", ["train-ai"])
    return await crawl(urls, LinkSpider, ADDONS=ADDON, **settings)


def license_hits(site) -> int:
    return site.paths().count(LICENSE)


@pytest_twisted.ensureDeferred
async def test_a_link_header_locates_the_license_for_the_page_and_the_sites_later_requests(serve, caplog):
    # RSL 1.0 3.1.2's document: / permits all, /articles/ prohibits ai-train. The home page
    # names it in a Link header; robots.txt names none.
    links = ("/articles/1", "/articles/2", "/about")
    site = serve(
        body(ROBOTS),
        {
            "/": html(links=links, headers={"Link": LINK}),
            "/about": html(),
            "/articles/1": html(),
            "/articles/2": html(),
            LICENSE: body(xml("scope.xml"), headers={"Content-Type": "application/rsl+xml"}),
        },
    )
    caplog.set_level(logging.INFO, logger="scrapy_robots")
    crawler = await link_crawl([f"{site.url}/"])
    # The home page is licensed for ai-train (its item kept); the pages it links to are
    # judged before download: /articles/ is not licensed, /about is.
    assert sorted(crawler.spider.downloaded) == [f"{site.url}/", f"{site.url}/about"]
    reason = crawler.spider.ignored[f"{site.url}/articles/1"]
    assert reason.startswith("Forbidden by RSL license: RSL not-licensed for ai-train: <content"), reason
    assert crawler.spider.ignored[f"{site.url}/articles/2"] == reason
    assert license_hits(site) == 1
    assert stat(crawler, "robotstxt/rsl/page_link/located") == 1
    assert stat(crawler, "robotstxt/rsl/denied/not_licensed") == 2
    assert stat(crawler, "item_scraped_count") == 2
    [said] = [r.getMessage() for r in caplog.records if "links to its license.xml" in r.getMessage()]
    assert said.startswith(f"{site.url}: its page {site.url}/ links to its license.xml at {site.url}{LICENSE}"), said


@pytest_twisted.ensureDeferred
async def test_a_head_link_obeys_the_page_and_the_pages_already_on_their_way(serve):
    # Every start URL is judged before the first page comes back; two pages answer half a
    # second late: the page that names the license and the two judged before it was located
    # are answered by it once downloaded.
    def late(handler):
        return body_later(handler, 0.5, lambda request: True)

    site = serve(
        body(ROBOTS),
        {
            "/articles/1": html(head=HEAD),
            "/articles/2": late(html()),
            "/about": late(html()),
            LICENSE: body(xml("scope.xml")),
        },
    )
    urls = [f"{site.url}/articles/1", f"{site.url}/articles/2", f"{site.url}/about"]
    crawler = await link_crawl(urls)
    assert sorted(crawler.spider.downloaded) == sorted(urls)  # judged before the license was known
    assert stat(crawler, "item_scraped_count") == 1  # /about's
    assert stat(crawler, "robotstxt/usage/items_dropped/train-ai") == 2
    assert license_hits(site) == 1
    # The same crawl in tag mode: every item kept, each page tagged with the license's answer.
    again = serve(body(ROBOTS), dict(site.routes))
    urls = [url.replace(site.url, again.url) for url in urls]
    tagged = await link_crawl(urls, ROBOTSTXT_USAGE_MODE="tag")
    assert stat(tagged, "item_scraped_count") == 3
    said = {url.rsplit("/", 2)[-2:][-1]: tagged.spider.tags[url]["train-ai"] for url in urls}
    assert {name: (tag["decision"], tag["source"]) for name, tag in said.items()} == {
        "1": ("deny", "license link"),
        "2": ("deny", "license link"),
        "about": ("allow", "license link"),
    }, said


@pytest_twisted.ensureDeferred
async def test_links_that_are_not_the_sites_rsl_document_are_not_read(serve):
    # A rel="license" link without RSL's media type points to a human-readable license; a
    # page's RSL link beside robots.txt's own License line is not read (one per site).
    plain = serve(
        body(ROBOTS),
        {
            "/a": html(headers={"Link": f'<{LICENSE}>; rel="license"'}),
            "/b": html(head=f'<link rel="license" href="{LICENSE}">'),
            LICENSE: body(xml("scope.xml")),
        },
    )
    crawler = await link_crawl([f"{plain.url}/a", f"{plain.url}/b"])
    assert stat(crawler, "item_scraped_count") == 2 and license_hits(plain) == 0
    assert stat(crawler, "robotstxt/rsl/page_link/located") == 0

    def robots_naming(request):
        return f"License: http://{request.getHeader('host')}/permits.xml\n\n{ROBOTS}".encode()

    permits = "<rsl xmlns='https://rslstandard.org/rsl'><content url='/'><license><permits type='usage'>all"
    named = serve(
        robots_naming,
        {
            "/articles/1": html(headers={"Link": LINK}),
            "/permits.xml": body(permits + "</permits></license></content></rsl>"),
            LICENSE: body(xml("scope.xml")),
        },
    )
    crawler = await link_crawl([f"{named.url}/articles/1"])
    assert crawler.spider.downloaded == [f"{named.url}/articles/1"] and stat(crawler, "item_scraped_count") == 1
    assert license_hits(named) == 0 and named.paths().count("/permits.xml") == 1
    assert stat(crawler, "robotstxt/rsl/page_link/elsewhere") == 1


@pytest_twisted.ensureDeferred
async def test_a_linked_license_that_cannot_be_had_denies_never_allows_then_is_read(serve):
    # The license answers 503, then the document. While it is unreachable the page that names
    # it has its items dropped and the pages it links to are kept out (never silently let
    # through); the next crawl reads the document and obeys it.
    site = serve(
        body(ROBOTS),
        {
            "/articles/1": html(headers={"Link": LINK}, links=("/articles/2", "/about")),
            "/articles/2": html(),
            "/about": html(),
            LICENSE: sequence(body("busy", 503), body(xml("scope.xml"))),
        },
    )
    down = await link_crawl([f"{site.url}/articles/1"], ROBOTSTXT_UNREACHABLE_RETRY_TIMES=0)
    assert down.spider.downloaded == [f"{site.url}/articles/1"]
    assert stat(down, "item_scraped_count") == 0 and stat(down, "robotstxt/usage/items_dropped/train-ai") == 1
    for path in ("/articles/2", "/about"):
        reason = down.spider.ignored[f"{site.url}{path}"]
        assert reason.startswith("Forbidden by RSL license: license.xml unreachable (HTTP 503)"), reason
    back = await link_crawl([f"{site.url}/articles/1"], ROBOTSTXT_UNREACHABLE_RETRY_TIMES=0)
    assert sorted(back.spider.downloaded) == [f"{site.url}/about", f"{site.url}/articles/1"]
    assert back.spider.ignored[f"{site.url}/articles/2"].startswith("Forbidden by RSL license: RSL not-licensed")
    assert stat(back, "item_scraped_count") == 1  # /about's: /articles/1 is not licensed for ai-train
    assert license_hits(site) == 2


@pytest_twisted.ensureDeferred
async def test_the_record_and_scrapy_robots_page_name_the_linked_license(serve, tmp_path):
    site = serve(
        body(ROBOTS),
        {"/articles/1": html(head=HEAD), "/about": html(head=HEAD), LICENSE: body(xml("scope.xml"))},
    )
    folder = tmp_path / "record"
    crawler = await link_crawl(
        [f"{site.url}/articles/1", f"{site.url}/about"],
        ROBOTSTXT_RECORD=str(folder),
        ROBOTSTXT_RECORD_FORMAT="jsonl",
    )
    assert stat(crawler, "robotstxt/rsl/page_link/located") == 1  # two pages name it: located once
    [row] = [row for row in Record([folder]).pages if row["url"] == f"{site.url}/articles/1"]
    text = json.dumps(row)
    assert "license link" in text and "not-licensed" in text, row
    assert not [row for row in Record([folder]).pages if row["url"] == f"{site.url}/about"]
    [answer] = await answers(tmp_path, "--usage", "train-ai", "--page", f"{site.url}/articles/1")
    assert answer["items_dropped"]["purpose"] == "train-ai", answer
    assert "RSL not-licensed for ai-train" in answer["items_dropped"]["by"], answer
    [licensed] = await answers(tmp_path, "--usage", "train-ai", "--page", f"{site.url}/about")
    assert licensed["items_dropped"] is None, licensed
