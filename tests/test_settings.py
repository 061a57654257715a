"""Settings from settings.py, overridden per spider with custom_settings."""

from __future__ import annotations

import pytest_twisted

from crawling import RecordingSpider, crawl, robots_middleware, stat
from servers import body


class RFCSpider(RecordingSpider):
    name = "rfc"
    custom_settings = {"ROBOTSTXT_STATUS_POLICY": "rfc9309", "ROBOTSTXT_PARSER": "scrapy_robots.parsers.PythonParser"}


@pytest_twisted.ensureDeferred
async def test_custom_settings_override_project_settings(serve):
    forbidden = serve(body("User-agent: *\nDisallow: /\n", status=403))
    project = await crawl([f"{forbidden.url}/a"])
    assert project.spider.downloaded == []
    per_spider = await crawl([f"{forbidden.url}/a"], spider_cls=RFCSpider)
    assert per_spider.spider.downloaded == [f"{forbidden.url}/a"]


@pytest_twisted.ensureDeferred
async def test_custom_settings_choose_the_parser(serve):
    # urllib reads "*" literally; Protego/RFC 9309 treat it as a wildcard.
    site = serve(body("User-agent: *\nDisallow: /*.pdf$\n"))
    default = await crawl([f"{site.url}/x.pdf"])
    assert default.spider.downloaded == []
    python = await crawl([f"{site.url}/x.pdf"], spider_cls=RFCSpider)
    assert python.spider.downloaded == [f"{site.url}/x.pdf"]


@pytest_twisted.ensureDeferred
async def test_scrapy_parser_class_in_setting(serve):
    site = serve(body("User-agent: *\nDisallow: /private\n"))
    crawler = await crawl(
        [f"{site.url}/private", f"{site.url}/ok"], ROBOTSTXT_PARSER="scrapy.robotstxt.ProtegoRobotParser"
    )
    assert crawler.spider.downloaded == [f"{site.url}/ok"]
    # The answer alone would be the same with the default parser: check which one ran.
    mw = robots_middleware(crawler)
    assert mw.parser_name == "ProtegoRobotParser"
    entry = mw.cache.get(f"http://{site.host}:{site.port}")
    assert type(entry.parser.wrapped).__name__ == "ProtegoRobotParser"


@pytest_twisted.ensureDeferred
async def test_excluded_domains_never_fetched(serve):
    site = serve(body("User-agent: *\nDisallow:\n"))
    crawler = await crawl([f"{site.url}/a"], ROBOTSTXT_EXCLUDED_DOMAINS=[site.host])
    assert site.hits == []
    assert crawler.spider.ignored == {
        f"{site.url}/a": "Forbidden by robots.txt: excluded domain (ROBOTSTXT_EXCLUDED_DOMAINS)"
    }
    assert stat(crawler, "robotstxt/denied/excluded") == 1


def test_excluded_domain_matching_on_label_boundaries():
    from scrapy.utils.test import get_crawler

    from crawling import BASE_SETTINGS
    from scrapy_robots import RobotsTxtMiddleware

    crawler = get_crawler(settings_dict={**BASE_SETTINGS, "ROBOTSTXT_EXCLUDED_DOMAINS": ["gov", ".Mil.", "example.org"]})
    mw = RobotsTxtMiddleware.from_crawler(crawler)
    assert mw._excluded("https://www.nasa.gov:443")
    assert mw._excluded("https://army.MIL:443".lower())
    assert mw._excluded("http://example.org:80")
    assert mw._excluded("http://a.example.org:80")
    assert not mw._excluded("http://notexample.org:80")
    assert not mw._excluded("http://gov.example.com:80")
    assert not mw._excluded("http://lagov:80")
