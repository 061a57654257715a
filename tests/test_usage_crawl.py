"""AI usage preferences in real crawls: robots.txt lines decide before download, the
Content-Usage header after it; deny mode ignores and drops, tag mode only tags."""

from __future__ import annotations

import logging

import pytest
import pytest_twisted
from crawling import RecordingSpider, crawl, stat
from servers import body

# Sample files written for these tests. FooBot (the crawl's agent) has its own group.
ROBOTS = """\
User-agent: FooBot
Content-Usage: train-ai=n
Content-Usage: /open/ train-ai=y
Disallow: /private

User-agent: *
Content-Signal: search=yes, ai-train=yes
"""
# Both vocabularies in one group, and they conflict for training: a "no" wins.
CONFLICT = """\
User-agent: *
Content-Signal: search=yes, ai-train=yes
Content-Usage: train-ai=n
"""
LENIENT = "User-agent: *\nContent-Signal: search=yes, ai-input=yes, ai-train=yes\n"
USAGE_MW = {"scrapy_robots.spidermw.UsageMiddleware": 100}


class ItemSpider(RecordingSpider):
    """Yields one item per page and records the preferences each response carries."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.tags: dict[str, dict] = {}

    def parse(self, response):
        super().parse(response)
        self.tags[response.url] = response.meta.get("robotstxt_usage")
        yield {"url": response.url}


async def usage_crawl(urls, **settings):
    return await crawl(urls, ItemSpider, SPIDER_MIDDLEWARES=USAGE_MW, **settings)


def _path(url: str) -> str:
    return url.split("/", 3)[3]


@pytest_twisted.ensureDeferred
async def test_deny_mode_ignores_before_download_naming_the_line(serve):
    site = serve(body(ROBOTS))
    urls = [f"{site.url}/page", f"{site.url}/open/a", f"{site.url}/private/x"]
    crawler = await usage_crawl(urls, ROBOTSTXT_USAGE=["train-ai"])
    assert [_path(u) for u in crawler.spider.downloaded] == ["open/a"]
    reason = crawler.spider.ignored[f"{site.url}/page"]
    assert "line 2 (Content-Usage: train-ai=n) denies train-ai" in reason, reason
    assert "/page" not in site.paths()  # never downloaded
    assert stat(crawler, "robotstxt/usage/denied/train-ai") == 1
    assert stat(crawler, "robotstxt/forbidden") == 1  # /private: the rules still apply
    # The allowed page carries its preference: the /open/ scope (line 3) says yes.
    assert crawler.spider.tags[f"{site.url}/open/a"]["train-ai"]["line"] == 3


@pytest_twisted.ensureDeferred
async def test_tag_mode_downloads_and_tags(serve):
    site = serve(body(ROBOTS))
    crawler = await usage_crawl(
        [f"{site.url}/page"], ROBOTSTXT_USAGE=["train-ai", "search"], ROBOTSTXT_USAGE_MODE="tag"
    )
    assert len(crawler.spider.downloaded) == 1 and not crawler.spider.ignored
    tags = crawler.spider.tags[f"{site.url}/page"]
    assert tags["train-ai"] == {
        "decision": "deny",
        "stated": True,
        "line": 2,
        "text": "Content-Usage: train-ai=n",
        "source": "robots.txt",
    }
    assert tags["search"]["decision"] == "allow" and tags["search"]["stated"] is False
    assert stat(crawler, "robotstxt/usage/denied/train-ai") == 0
    assert stat(crawler, "item_scraped_count") == 1


@pytest_twisted.ensureDeferred
async def test_group_scoped_signal_for_the_star_group(serve):
    site = serve(body(ROBOTS))
    # Another crawler obeys the * group, whose Content-Signal allows training.
    crawler = await usage_crawl([f"{site.url}/page"], ROBOTSTXT_USAGE=["ai-train"], USER_AGENT="OtherBot/2.0")
    assert len(crawler.spider.downloaded) == 1
    assert crawler.spider.tags[f"{site.url}/page"]["train-ai"]["line"] == 7


@pytest_twisted.ensureDeferred
async def test_conflicting_lines_deny_wins(serve):
    site = serve(body(CONFLICT))
    crawler = await usage_crawl([f"{site.url}/a", f"{site.url}/b"], ROBOTSTXT_USAGE=["train-genai"])
    assert not crawler.spider.downloaded
    assert all("line 3 (Content-Usage: train-ai=n)" in r for r in crawler.spider.ignored.values())
    assert stat(crawler, "robotstxt/usage/denied/train-genai") == 2


@pytest.mark.parametrize("parser", ["protego.ProtegoParser", "python.PythonParser", "rerp.RerpParser"])
@pytest_twisted.ensureDeferred
async def test_every_backend_keeps_the_preferences(serve, parser):
    site = serve(body(ROBOTS))
    crawler = await usage_crawl(
        [f"{site.url}/page", f"{site.url}/open/a"],
        ROBOTSTXT_USAGE=["train-ai"],
        ROBOTSTXT_PARSER=f"scrapy_robots.parsers.{parser}",
    )
    assert [_path(u) for u in crawler.spider.downloaded] == ["open/a"]
    assert stat(crawler, "robotstxt/usage/denied/train-ai") == 1


@pytest_twisted.ensureDeferred
async def test_unset_changes_nothing(serve):
    site = serve(body(CONFLICT))
    crawler = await usage_crawl([f"{site.url}/a"])
    assert len(crawler.spider.downloaded) == 1
    assert crawler.spider.tags[f"{site.url}/a"] is None
    assert not [k for k in crawler.stats.get_stats() if k.startswith("robotstxt/usage")]


@pytest_twisted.ensureDeferred
async def test_header_stricter_than_robots_drops_the_items(serve):
    strict = body("<html></html>", headers={"Content-Usage": "train-ai=n"})
    site = serve(body(LENIENT), routes={"/strict": strict})
    urls = [f"{site.url}/strict", f"{site.url}/plain"]
    crawler = await usage_crawl(urls, ROBOTSTXT_USAGE=["train-ai"])
    assert sorted(_path(u) for u in crawler.spider.downloaded) == ["plain", "strict"]
    tag = crawler.spider.tags[f"{site.url}/strict"]["train-ai"]
    assert tag["decision"] == "deny" and tag["source"] == "header"
    assert stat(crawler, "item_scraped_count") == 1
    assert stat(crawler, "robotstxt/usage/items_dropped/train-ai") == 1
    assert stat(crawler, "robotstxt/usage/header/denied/train-ai") == 1


@pytest_twisted.ensureDeferred
async def test_header_in_tag_mode_keeps_the_items(serve):
    strict = body("<html></html>", headers={"Content-Usage": "search=n"})
    site = serve(body(LENIENT), routes={"/strict": strict})
    crawler = await usage_crawl([f"{site.url}/strict"], ROBOTSTXT_USAGE=["search"], ROBOTSTXT_USAGE_MODE="tag")
    assert stat(crawler, "item_scraped_count") == 1
    assert crawler.spider.tags[f"{site.url}/strict"]["search"]["source"] == "header"


@pytest_twisted.ensureDeferred
async def test_malformed_header_warns_once_per_site(serve, caplog):
    bad = body("<html></html>", headers={"Content-Usage": "train-ai=n,,"})
    site = serve(body(LENIENT), routes={"/m1": bad, "/m2": bad})
    # Two purposes: still one count per response.
    crawler = await usage_crawl([f"{site.url}/m1", f"{site.url}/m2"], ROBOTSTXT_USAGE=["train-ai", "search"])
    assert stat(crawler, "item_scraped_count") == 2
    assert stat(crawler, "robotstxt/usage/header/malformed") == 2
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "Content-Usage" in r.getMessage()]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]


@pytest_twisted.ensureDeferred
async def test_malformed_robots_lines_are_ignored(serve):
    site = serve(body("User-agent: *\nContent-Usage: train-ai=n,\nContent-Signal: ai_train=no\n"))
    crawler = await usage_crawl([f"{site.url}/a"], ROBOTSTXT_USAGE=["train-ai"])
    assert len(crawler.spider.downloaded) == 1


@pytest_twisted.ensureDeferred
async def test_a_bad_setting_fails_at_start_up_naming_it(serve):
    site = serve(body(ROBOTS))
    # Scrapy 2.13 raises AttributeError ('ExecutionEngine' object has no attribute
    # 'downloader') while it handles ours, which is its context and is printed first.
    with pytest.raises(Exception) as raised:
        await usage_crawl([f"{site.url}/a"], ROBOTSTXT_USAGE=["ai_train"])
    error = raised.value if isinstance(raised.value, ValueError) else raised.value.__context__
    assert isinstance(error, ValueError), raised.value
    assert "ROBOTSTXT_USAGE: unknown purpose 'ai_train'" in str(error)


@pytest_twisted.ensureDeferred
async def test_preferences_survive_the_hot_tier(serve):
    # One parsed site in memory: alternating sites rebuild each entry from the stored
    # body (_hydrate), and the preferences with it.
    first, second = serve(body(ROBOTS)), serve(body(CONFLICT))
    urls = [f"{site.url}/p{i}" for i in range(4) for site in (first, second)]
    crawler = await usage_crawl(
        urls,
        ROBOTSTXT_USAGE=["train-ai"],
        ROBOTSTXT_CACHE_PARSED=1,
        CONCURRENT_REQUESTS=1,
        # In the order given: Scrapy 2.14's downloader-aware queue sent one site's pages first.
        SCHEDULER_PRIORITY_QUEUE="scrapy.pqueues.ScrapyPriorityQueue",
    )
    assert stat(crawler, "robotstxt/cache/restored") >= 1
    assert not crawler.spider.downloaded
    assert stat(crawler, "robotstxt/usage/denied/train-ai") == 8
    assert first.robots_hits() == 1 and second.robots_hits() == 1


@pytest_twisted.ensureDeferred
async def test_a_resumed_crawl_parses_only_the_sites_that_state_preferences(serve, tmp_path):
    # With ROBOTSTXT_USAGE set, a site restored from the storage gets its rules from the
    # stored form (#21); only a file that states preferences is read again, for them.
    stating = serve(body(ROBOTS))
    silent = [serve(body("User-agent: *\nDisallow: /private\n")) for _ in range(2)]
    sites = [stating, *silent]
    jobdir = str(tmp_path / "job")
    settings = {"ROBOTSTXT_USAGE": ["train-ai"], "JOBDIR": jobdir}
    first = await usage_crawl([f"{site.url}/a" for site in sites], **settings)
    assert stat(first, "robotstxt/parsed") == 3
    second = await usage_crawl([f"{site.url}/{path}" for site in sites for path in ("page", "private/x")], **settings)
    assert stat(second, "robotstxt/request_count") == 0
    assert stat(second, "robotstxt/cache/restored") == 3
    assert stat(second, "robotstxt/parsed") == 1
    # What the restored sites answer is what the fetched ones did.
    assert sorted(second.spider.downloaded) == sorted(f"{site.url}/page" for site in silent)
    assert "train-ai" in second.spider.ignored[f"{stating.url}/page"]
    assert stat(second, "robotstxt/usage/denied/train-ai") == 1
    assert stat(second, "robotstxt/forbidden") == 3


@pytest_twisted.ensureDeferred
async def test_one_info_line_per_site_whose_requests_a_preference_denies(serve, caplog):
    # Issue #30: the requests are ignored at DEBUG; the site's decision is one INFO line.
    caplog.set_level(logging.INFO, logger="scrapy_robots")
    by_usage = serve(body(ROBOTS))  # FooBot's group: Content-Usage, /open/ allowed
    by_signal = serve(body("User-agent: *\nContent-Signal: search=yes, ai-train=no\n"))
    lenient = serve(body(LENIENT))  # states a preference that allows
    silent = serve(body("User-agent: *\nDisallow: /private\n"))
    urls = [f"{site.url}/p{i}" for i in range(3) for site in (by_usage, by_signal, lenient, silent)]
    crawler = await usage_crawl([*urls, f"{by_usage.url}/open/a"], ROBOTSTXT_USAGE=["train-ai"])
    assert stat(crawler, "robotstxt/usage/denied/train-ai") == 6
    lines = sorted(
        r.getMessage() for r in caplog.records if r.levelno == logging.INFO and "usage preference" in r.getMessage()
    )
    assert lines == sorted(
        [
            f"robots.txt for {by_usage.url}: requests denied by its usage preference, line 2 "
            "(Content-Usage: train-ai=n) denies train-ai (ROBOTSTXT_USAGE); logged once per site",
            f"robots.txt for {by_signal.url}: requests denied by its usage preference, line 2 "
            "(Content-Signal: search=yes, ai-train=no) denies train-ai (ROBOTSTXT_USAGE); logged once per site",
        ]
    ), lines


@pytest_twisted.ensureDeferred
async def test_the_usage_settings_are_read_once_per_crawl(serve, monkeypatch):
    # The downloader middleware, the spider middleware and TDMRep's purposes share one
    # reading of the settings (RobotsConfig.of), however many parts need it.
    from scrapy_robots.settings.config import RobotsConfig

    reads = []
    read = RobotsConfig.from_settings
    monkeypatch.setattr(RobotsConfig, "from_settings", lambda settings: reads.append(settings) or read(settings))
    site = serve(body(ROBOTS))
    crawler = await crawl(
        [f"{site.url}/page", f"{site.url}/open/a"],
        ItemSpider,
        ROBOTSTXT_USAGE=["train-ai"],
        SPIDER_MIDDLEWARES=USAGE_MW,
    )
    assert len(reads) == 1
    assert stat(crawler, "robotstxt/usage/denied/train-ai") == 1  # both parts at work on that reading
    assert crawler.spider.downloaded == [f"{site.url}/open/a"]


# The drafts as they stand (vocab-08, attach-05): what an earlier reading decided otherwise.
# bots=n filled every purpose (vocab-03/-04's umbrella) and a rule silent on the purpose
# let a shorter one speak; train-genai was read for train-genai alone.
DRAFTS = """\
User-agent: *
Content-Usage: bots=n
Content-Usage: /genai/ train-genai=n
Content-Usage: /news/ search=y
"""


@pytest_twisted.ensureDeferred
async def test_the_drafts_reading_in_a_crawl(serve):
    old_header = body("<html></html>", headers={"Content-Usage": "bots=n"})
    site = serve(body(DRAFTS), routes={"/h": old_header})
    urls = [f"{site.url}/a", f"{site.url}/genai/x", f"{site.url}/news/1", f"{site.url}/h"]
    crawler = await usage_crawl(urls, ROBOTSTXT_USAGE=["train-ai"], CONCURRENT_REQUESTS=1)
    # Allowed now: bots=n fills nothing, the /news/ rule says nothing of train-ai.
    assert sorted(_path(u) for u in crawler.spider.downloaded) == ["a", "h", "news/1"]
    assert crawler.spider.tags[f"{site.url}/a"]["train-ai"]["stated"] is False
    assert crawler.spider.tags[f"{site.url}/news/1"]["train-ai"]["stated"] is False
    # Denied now: vocab-02/-03's train-genai is read as train-ai.
    reason = crawler.spider.ignored[f"{site.url}/genai/x"]
    assert "line 3 (Content-Usage: /genai/ train-genai=n) denies train-ai" in reason, reason
    assert "/genai/x" not in site.paths()
    assert stat(crawler, "robotstxt/usage/denied/train-ai") == 1
    # The page whose header says bots=n keeps its item.
    assert stat(crawler, "item_scraped_count") == 3
    assert stat(crawler, "robotstxt/usage/items_dropped/train-ai") == 0


@pytest_twisted.ensureDeferred
async def test_the_drafts_reading_for_the_other_purposes(serve):
    # The labels next to train-ai: bots=n denies neither search nor ai-use any more.
    site = serve(body(DRAFTS), routes={"/h": body("<html></html>", headers={"Content-Usage": "bots=n"})})
    urls = [f"{site.url}/a", f"{site.url}/genai/x", f"{site.url}/news/1", f"{site.url}/h"]
    crawler = await usage_crawl(urls, ROBOTSTXT_USAGE=["search", "ai-use"])
    assert len(crawler.spider.downloaded) == 4 and not crawler.spider.ignored
    news = crawler.spider.tags[f"{site.url}/news/1"]
    assert (news["search"]["decision"], news["search"]["line"]) == ("allow", 4)
    assert news["ai-use"]["stated"] is False
    assert stat(crawler, "item_scraped_count") == 4


# Content-Signal before the first User-agent (sites disagree on the placement), and the
# same line in the group.
FILE_WIDE = "Content-Signal: search=yes, ai-train=no\nUser-agent: *\nDisallow: /private\n"
IN_GROUP = "User-agent: *\nContent-Signal: search=yes, ai-train=no\nDisallow: /private\n"


@pytest_twisted.ensureDeferred
async def test_a_signal_before_any_user_agent_denies_and_says_its_reading(serve, caplog):
    caplog.set_level(logging.INFO, logger="scrapy_robots")
    before, inside = serve(body(FILE_WIDE)), serve(body(IN_GROUP))
    urls = [f"{site.url}/{path}" for site in (before, inside) for path in ("p1", "p2", "private/x")]
    crawler = await usage_crawl(urls, ROBOTSTXT_USAGE=["train-ai"])
    assert not crawler.spider.downloaded
    assert stat(crawler, "robotstxt/usage/denied/train-ai") == 4
    assert stat(crawler, "robotstxt/forbidden") == 2  # the rules first, in both
    assert (
        "line 1 (Content-Signal: search=yes, ai-train=no (before any User-agent: read for every crawler))"
        in (crawler.spider.ignored[f"{before.url}/p1"])
    )
    assert "line 2 (Content-Signal: search=yes, ai-train=no) denies" in crawler.spider.ignored[f"{inside.url}/p1"]
    lines = sorted(
        r.getMessage() for r in caplog.records if r.levelno == logging.INFO and "usage preference" in r.getMessage()
    )
    assert lines == sorted(
        [
            f"robots.txt for {before.url}: requests denied by its usage preference, line 1 (Content-Signal: "
            "search=yes, ai-train=no (before any User-agent: read for every crawler)) denies train-ai "
            "(ROBOTSTXT_USAGE); logged once per site",
            f"robots.txt for {inside.url}: requests denied by its usage preference, line 2 (Content-Signal: "
            "search=yes, ai-train=no) denies train-ai (ROBOTSTXT_USAGE); logged once per site",
        ]
    ), lines


# attach-05 section 3.4's example, crawled by the agent it names and by another.
EXAMPLE = """\
User-Agent: *
Allow: /
Disallow: /never/
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y

User-Agent: ExampleBot
Allow: /
Content-Usage: train-ai=y
"""


@pytest_twisted.ensureDeferred
async def test_the_attach_example_crawled_by_two_agents(serve):
    site = serve(body(EXAMPLE))
    urls = [f"{site.url}{path}" for path in ("/test", "/never/test", "/ai-ok/test")]
    example = await usage_crawl(urls, ROBOTSTXT_USAGE=["train-ai"], USER_AGENT="ExampleBot/1.0")
    assert sorted(_path(u) for u in example.spider.downloaded) == ["ai-ok/test", "never/test", "test"]
    assert {tag["train-ai"]["line"] for tag in example.spider.tags.values()} == {9}
    other = await usage_crawl(urls, ROBOTSTXT_USAGE=["train-ai"], USER_AGENT="OtherBot/1.0")
    assert [_path(u) for u in other.spider.downloaded] == ["ai-ok/test"]
    assert other.spider.tags[f"{site.url}/ai-ok/test"]["train-ai"]["line"] == 5
    assert "line 4 (Content-Usage: train-ai=n)" in other.spider.ignored[f"{site.url}/test"]
    assert stat(other, "robotstxt/forbidden") == 1  # /never/: not crawlable, no preference
    assert stat(other, "robotstxt/usage/denied/train-ai") == 1
