"""TDMRep in real crawls (issue #34): the site's /.well-known/tdmrep.json fetched once per
site when a declared purpose needs it, its first matching rule applied before download,
the response's tdm-* header fields and meta tags after it (file < header < meta); deny
mode ignores and drops, tag mode only tags. Everything counted at the servers."""

from __future__ import annotations

import json
import logging

import pytest
import pytest_twisted
from crawling import RecordingSpider, crawl, stat
from servers import body, sequence

WELL_KNOWN = "/.well-known/tdmrep.json"
ROBOTS = "User-agent: *\nDisallow: /private\n"
USAGE_MW = {"scrapy_robots.spidermw.UsageMiddleware": 100}
POLICY = "https://publisher.example/tdm-policy.json"
RULES = [
    {"location": "/books/free/*", "tdm-reservation": 0},
    {"location": "/books/*", "tdm-reservation": 1, "tdm-policy": POLICY},
    {"location": "/*.pdf$", "tdm-reservation": 1},
]


def tdmrep(rules, status: int = 200):
    return body(json.dumps(rules), status, {"Content-Type": "application/json"})


def html(head: str = "", headers: dict[str, str] | None = None):
    page = f"<html><head>{head}</head><body>a page</body></html>"
    return body(page, headers={"Content-Type": "text/html", **(headers or {})})


class ItemSpider(RecordingSpider):
    """One item per page; records the preferences and TDMRep answer each response carries."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.tags: dict[str, dict] = {}
        self.tdm: dict[str, dict] = {}

    def parse(self, response):
        super().parse(response)
        self.tags[response.url] = response.meta.get("robotstxt_usage")
        self.tdm[response.url] = response.meta.get("robotstxt_tdmrep")
        yield {"url": response.url}


async def tdm_crawl(urls, **settings):
    settings.setdefault("ROBOTSTXT_USAGE", ["train-ai"])
    return await crawl(urls, ItemSpider, SPIDER_MIDDLEWARES=USAGE_MW, **settings)


def tdm_hits(site) -> int:
    return site.paths().count(WELL_KNOWN)


def pages(site) -> set[str]:
    return {path for path in site.paths() if path not in ("/robots.txt", WELL_KNOWN)}


@pytest_twisted.ensureDeferred
async def test_deny_mode_ignores_by_the_first_matching_rule_fetching_the_file_once_for_many_pages(serve):
    site = serve(body(ROBOTS), {WELL_KNOWN: tdmrep(RULES)})
    others = [f"{site.url}/other/{n}" for n in range(20)]
    urls = [f"{site.url}/books/free/a", f"{site.url}/books/b", f"{site.url}/doc.pdf", f"{site.url}/doc.pdf?x=1"]
    crawler = await tdm_crawl([*urls, *others, f"{site.url}/private/x"])
    assert tdm_hits(site) == 1
    # The first matching rule decides: /books/free/ (rule 1, 0) before /books/ (rule 2, 1).
    # "/*.pdf$" matches /doc.pdf, not /doc.pdf?x=1 (which the server records as /doc.pdf).
    assert pages(site) == {"/books/free/a", "/doc.pdf", *(f"/other/{n}" for n in range(20))}
    assert f"{site.url}/doc.pdf?x=1" in crawler.spider.downloaded
    reason = crawler.spider.ignored[f"{site.url}/books/b"]
    assert reason.startswith("Forbidden by TDMRep reservation: tdmrep.json rule 2 ("), reason
    assert f"reserves TDM rights (tdm-policy {POLICY}): denies train-ai" in reason, reason
    assert "tdmrep.json rule 3" in crawler.spider.ignored[f"{site.url}/doc.pdf"]
    assert stat(crawler, "robotstxt/tdmrep/denied/file") == 2
    assert stat(crawler, "robotstxt/tdmrep/status/200") == 1
    assert stat(crawler, "robotstxt/forbidden") == 1  # robots.txt's rules still apply
    # What the file said of an allowed page rides with it.
    free = crawler.spider.tdm[f"{site.url}/books/free/a"]
    assert free["reserved"] is False and free["reason"].startswith("tdmrep.json rule 1")
    assert crawler.spider.tags[f"{site.url}/books/free/a"]["train-ai"]["source"] == "tdmrep.json"


@pytest_twisted.ensureDeferred
async def test_tag_mode_downloads_everything_and_tags_the_rule_and_its_policy(serve):
    site = serve(body(ROBOTS), {WELL_KNOWN: tdmrep(RULES)})
    crawler = await tdm_crawl(
        [f"{site.url}/books/b", f"{site.url}/books/free/a"], ROBOTSTXT_USAGE=["train-genai"], ROBOTSTXT_USAGE_MODE="tag"
    )
    assert pages(site) == {"/books/b", "/books/free/a"} and not crawler.spider.ignored
    tag = crawler.spider.tags[f"{site.url}/books/b"]["train-genai"]
    assert tag["decision"] == "deny" and tag["source"] == "tdmrep.json" and tag["policy"] == POLICY
    assert tag["text"].startswith("tdmrep.json rule 2")
    assert crawler.spider.tags[f"{site.url}/books/free/a"]["train-genai"]["decision"] == "allow"
    assert len(crawler.spider.downloaded) == 2
    assert stat(crawler, "item_scraped_count") == 2


@pytest_twisted.ensureDeferred
async def test_a_404_or_a_malformed_file_reads_unset_and_every_page_goes(serve, caplog):
    missing = serve(body(ROBOTS), {WELL_KNOWN: body("no such file", 404)})
    broken = serve(body(ROBOTS), {WELL_KNOWN: body('[{"location": "/", "tdm-reservation": 1', 200)})
    urls = [f"{site.url}/books/{n}" for site in (missing, broken) for n in range(3)]
    with caplog.at_level(logging.INFO, logger="scrapy_robots"):
        crawler = await tdm_crawl(urls)
    assert len(crawler.spider.downloaded) == 6 and not crawler.spider.ignored
    assert tdm_hits(missing) == 1 and tdm_hits(broken) == 1
    assert stat(crawler, "robotstxt/tdmrep/status/404") == 1
    assert stat(crawler, "robotstxt/tdmrep/status/200") == 1
    assert stat(crawler, "robotstxt/tdmrep/malformed") == 1
    assert stat(crawler, "item_scraped_count") == 6
    warnings = [
        r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "tdmrep.json" in r.getMessage()
    ]
    assert len(warnings) == 1 and "not-json" in warnings[0] and broken.url in warnings[0], warnings
    assert crawler.spider.tdm[f"{missing.url}/books/0"]["reserved"] is None


@pytest_twisted.ensureDeferred
async def test_a_site_answering_an_html_page_everywhere_is_one_info_line_not_a_warning(serve, caplog):
    # Issue #48: a site that answers 200 with a page for every path (robots.txt and
    # tdmrep.json too) is the common site without TDMRep. Its robots.txt line says "an HTML
    # page" (a WARNING: the crawl has no rules); its tdmrep.json's says so too, at INFO, and
    # counts it apart from the files that are broken. Two such sites, beside a broken file.
    everywhere = [serve(html()), serve(html(headers={"Content-Type": "text/html; charset=utf-8"}))]
    broken = serve(body(ROBOTS), {WELL_KNOWN: body('[{"location": "/", "tdm-reservation": 1', 200)})
    urls = [f"{site.url}/books/{n}" for site in (*everywhere, broken) for n in range(2)]
    with caplog.at_level(logging.INFO, logger="scrapy_robots"):
        crawler = await tdm_crawl(urls)
    assert len(crawler.spider.downloaded) == 6 and not crawler.spider.ignored
    assert [tdm_hits(site) for site in (*everywhere, broken)] == [1, 1, 1]
    assert stat(crawler, "robotstxt/tdmrep/html_page") == 2
    assert stat(crawler, "robotstxt/tdmrep/malformed") == 1
    assert stat(crawler, "robotstxt/html_page") == 2
    lines = {
        site.url: [r for r in caplog.records if r.getMessage().startswith(f"tdmrep.json for {site.url}:")]
        for site in (*everywhere, broken)
    }
    for site in everywhere:
        [line] = lines[site.url]
        assert line.levelno == logging.INFO, line.getMessage()
        assert "an HTML page, not a tdmrep.json" in line.getMessage(), line.getMessage()
        assert "the site does not implement TDMRep, every URL reads unset" in line.getMessage()
        assert "not-json" not in line.getMessage() and "Expecting value" not in line.getMessage()
        robots = [r for r in caplog.records if r.getMessage().startswith(f"robots.txt for {site.url}")]
        assert "an HTML page, not a robots.txt" in robots[0].getMessage()
        assert crawler.spider.tdm[f"{site.url}/books/0"]["reserved"] is None
    [line] = lines[broken.url]
    assert line.levelno == logging.WARNING and "not-json" in line.getMessage()


@pytest_twisted.ensureDeferred
async def test_a_503_holds_the_pages_then_the_file_decides_and_a_site_that_stays_down_reads_reserved(serve):
    recovers = serve(body(ROBOTS), {WELL_KNOWN: sequence(body("busy", 503), body("busy", 503), tdmrep(RULES))})
    down = serve(body(ROBOTS), {WELL_KNOWN: body("busy", 503)})
    urls = [f"{site.url}/{path}" for site in (recovers, down) for path in ("books/b", "books/free/a", "other")]
    crawler = await tdm_crawl(
        urls, ROBOTSTXT_UNREACHABLE_RETRY_DELAY=0.2, ROBOTSTXT_UNREACHABLE_RETRY_TIMES=2, ROBOTSTXT_CACHE_TTL=3600
    )
    # The recovering site: two 503s, then the file; its pages waited and obeyed it.
    assert tdm_hits(recovers) == 3
    assert pages(recovers) == {"/books/free/a", "/other"}
    assert "tdmrep.json rule 2" in crawler.spider.ignored[f"{recovers.url}/books/b"]
    # The site that stays down: 1 + 2 retries, then reserved until it answers.
    assert tdm_hits(down) == 3
    assert pages(down) == set()
    reason = crawler.spider.ignored[f"{down.url}/other"]
    assert "tdmrep.json unreachable (HTTP 503) after 3 attempt(s), read as reserved" in reason, reason
    assert stat(crawler, "robotstxt/tdmrep/denied/unreachable") == 3
    assert stat(crawler, "robotstxt/tdmrep/status/503") == 5
    assert stat(crawler, "robotstxt/tdmrep/retry") == 4


@pytest_twisted.ensureDeferred
async def test_a_site_without_robots_txt_still_has_its_file_obeyed(serve):
    site = serve(body("no robots.txt here", 404), {WELL_KNOWN: tdmrep(RULES)})
    crawler = await tdm_crawl([f"{site.url}/books/b", f"{site.url}/a", f"{site.url}/b"])
    assert tdm_hits(site) == 1
    assert pages(site) == {"/a", "/b"}
    assert "tdmrep.json rule 2" in crawler.spider.ignored[f"{site.url}/books/b"]


# The file reserves /r/ and not /o/; each page's header or meta tag says otherwise, or not.
OVERRIDES = [{"location": "/r/*", "tdm-reservation": 1}, {"location": "/o/*", "tdm-reservation": 0}]
ZERO_META = '<meta name="tdm-reservation" content="0">'
ONE_META = f'<meta name="tdm-reservation" content="1"><meta name="tdm-policy" content="{POLICY}">'


def override_routes():
    return {
        WELL_KNOWN: tdmrep(OVERRIDES),
        "/r/header0": html(headers={"tdm-reservation": "0"}),
        "/r/meta0": html(ZERO_META),
        "/r/plain": html(),
        "/o/header1": html(headers={"tdm-reservation": "1"}),
        "/o/meta1": html(ONE_META),
        "/o/header1meta0": html(ZERO_META, headers={"tdm-reservation": "1"}),
        "/o/policy-only": html(headers={"tdm-policy": POLICY}),
        "/o/plain": html(),
    }


@pytest_twisted.ensureDeferred
async def test_tag_mode_a_header_and_a_meta_tag_override_the_file_both_ways(serve):
    site = serve(body(ROBOTS), override_routes())
    paths = ["r/header0", "r/meta0", "r/plain", "o/header1", "o/meta1", "o/header1meta0", "o/policy-only", "o/plain"]
    crawler = await tdm_crawl([f"{site.url}/{path}" for path in paths], ROBOTSTXT_USAGE_MODE="tag")
    assert len(crawler.spider.downloaded) == 8
    tags = {path: crawler.spider.tags[f"{site.url}/{path}"]["train-ai"] for path in paths}
    decided = {path: (tag["decision"], tag["source"]) for path, tag in tags.items()}
    assert decided == {
        "r/header0": ("allow", "tdm header"),  # 0 over the file's 1
        "r/meta0": ("allow", "tdm meta"),
        "r/plain": ("deny", "tdmrep.json"),
        "o/header1": ("deny", "tdm header"),  # 1 over the file's 0
        "o/meta1": ("deny", "tdm meta"),
        "o/header1meta0": ("allow", "tdm meta"),  # meta last
        "o/policy-only": ("allow", "tdmrep.json"),  # a policy alone resets no reservation
        "o/plain": ("allow", "tdmrep.json"),
    }
    assert tags["o/meta1"]["policy"] == POLICY
    assert stat(crawler, "robotstxt/tdmrep/reserved/header") == 2
    assert stat(crawler, "robotstxt/tdmrep/reserved/meta") == 1
    assert stat(crawler, "item_scraped_count") == 8


@pytest_twisted.ensureDeferred
async def test_deny_mode_drops_the_items_of_a_page_whose_header_or_meta_reserves(serve, caplog):
    site = serve(body(ROBOTS), override_routes())
    paths = ["r/header0", "o/header1", "o/meta1", "o/header1meta0", "o/plain"]
    caplog.set_level(logging.DEBUG, logger="scrapy_robots")
    crawler = await tdm_crawl([f"{site.url}/{path}" for path in paths])
    # The file's 1 keeps /r/ out before download: its page's 0 is never seen (the report:
    # the file is checked before scraping). /o/ pages are downloaded; two reserve.
    assert pages(site) == {"/o/header1", "/o/meta1", "/o/header1meta0", "/o/plain"}
    assert "tdmrep.json rule 1" in crawler.spider.ignored[f"{site.url}/r/header0"]
    assert stat(crawler, "item_scraped_count") == 2
    assert stat(crawler, "robotstxt/usage/items_dropped/train-ai") == 2
    # One INFO line for the site's drops, as for every other decision; each drop at DEBUG.
    drops = [r for r in caplog.records if r.getMessage().startswith("Item dropped")]
    assert [r.levelno for r in drops] == [logging.INFO, logging.DEBUG], [r.getMessage() for r in drops]
    assert "said once per site; robotstxt/usage/items_dropped/train-ai counts them" in drops[0].getMessage()


@pytest.mark.parametrize(
    "settings",
    [
        {"ROBOTSTXT_USAGE": None},
        {"ROBOTSTXT_USAGE": ["search"]},
        {"ROBOTSTXT_USAGE": ["train-ai"], "ROBOTSTXT_TDMREP": False},
    ],
    ids=["no-usage", "search-only", "tdmrep-off"],
)
@pytest_twisted.ensureDeferred
async def test_no_tdmrep_fetch_when_no_declared_purpose_needs_it(serve, settings):
    site = serve(body(ROBOTS), {WELL_KNOWN: tdmrep(RULES)})
    crawler = await tdm_crawl([f"{site.url}/books/b", f"{site.url}/other"], **settings)
    assert tdm_hits(site) == 0
    assert pages(site) == {"/books/b", "/other"}
    assert not any(key.startswith("robotstxt/tdmrep/") for key in crawler.stats.get_stats())


@pytest_twisted.ensureDeferred
async def test_a_jobdir_resume_does_not_fetch_the_file_again(serve, tmp_path):
    site = serve(body(ROBOTS), {WELL_KNOWN: tdmrep(RULES)})
    jobdir = str(tmp_path / "job")
    first = await tdm_crawl([f"{site.url}/books/b", f"{site.url}/a"], JOBDIR=jobdir)
    assert tdm_hits(site) == 1 and pages(site) == {"/a"}
    second = await tdm_crawl([f"{site.url}/books/c", f"{site.url}/doc.pdf", f"{site.url}/b"], JOBDIR=jobdir)
    assert tdm_hits(site) == 1  # restored from the job's storage
    assert pages(site) == {"/a", "/b"}
    assert "tdmrep.json rule 2" in second.spider.ignored[f"{site.url}/books/c"]
    assert "tdmrep.json rule 3" in second.spider.ignored[f"{site.url}/doc.pdf"]
    assert stat(second, "robotstxt/tdmrep/restored") == 1
    assert stat(first, "robotstxt/tdmrep/request_count") == 1
    assert stat(second, "robotstxt/tdmrep/request_count") == 0


@pytest_twisted.ensureDeferred
async def test_redis_storage_shares_the_file_between_two_crawls(serve, redis):
    site = serve(body(ROBOTS), {WELL_KNOWN: tdmrep(RULES)})
    shared = {"ROBOTSTXT_CACHE_STORAGE": "scrapy_robots.fleet.RedisRobotsStorage", "ROBOTSTXT_REDIS_URL": redis.url}
    first = await tdm_crawl([f"{site.url}/books/b", f"{site.url}/a"], **shared)
    second = await tdm_crawl([f"{site.url}/books/c", f"{site.url}/b"], **shared)
    assert tdm_hits(site) == 1
    assert pages(site) == {"/a", "/b"}
    assert "tdmrep.json rule 2" in first.spider.ignored[f"{site.url}/books/b"]
    assert "tdmrep.json rule 2" in second.spider.ignored[f"{site.url}/books/c"]
    assert stat(second, "robotstxt/tdmrep/request_count") == 0
