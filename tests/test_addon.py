"""The add-on: ours replaces Scrapy's robots.txt middleware, wherever the settings that
list Scrapy's come from (issue #20 item 1). Real `scrapy runspider` processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_command import site  # noqa: F401 - fixture

STOCK = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"
ADDON = json.dumps({"scrapy_robots.Addon": 0})
LIST_STOCK = json.dumps({STOCK: 543})

SPIDER = """
import scrapy

class S(scrapy.Spider):
    name = "s"
    custom_settings = {custom}

    async def start(self):
        for path in ("/a", "/private/b"):
            yield scrapy.Request("{url}" + path, callback=self.parse)

    def parse(self, response):
        pass
"""


def _crawl(tmp_path: Path, url: str, custom: dict[str, object], *args: str) -> subprocess.CompletedProcess[str]:
    spider = tmp_path / "spider.py"
    spider.write_text(SPIDER.format(custom=repr(custom), url=url))
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "runspider", str(spider), "-s", "ROBOTSTXT_OBEY=True", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=90,
    )


def _enabled(log: str) -> str:
    start = log.index("Enabled downloader middlewares")
    return log[start : log.index("]", start)]


@pytest.mark.parametrize(
    ("custom", "args"),
    [
        # The add-on in -s, Scrapy's middleware listed again by the spider.
        ({"DOWNLOADER_MIDDLEWARES": {STOCK: 543}}, ("-s", f"ADDONS={ADDON}")),
        # The add-on in the spider, Scrapy's middleware listed again with -s.
        ({"ADDONS": {"scrapy_robots.Addon": 0}}, ("-s", f"DOWNLOADER_MIDDLEWARES={LIST_STOCK}")),
    ],
    ids=["custom_settings", "command_line"],
)
def test_scrapy_s_middleware_never_runs_beside_ours(site, tmp_path, custom, args):
    s = site("User-agent: *\nDisallow: /private\n")
    out = _crawl(tmp_path, s.url, custom, *args)
    assert out.returncode == 0, out.stderr[-3000:]
    enabled = _enabled(out.stderr)
    assert "scrapy_robots.middleware.RobotsTxtMiddleware" in enabled
    assert STOCK not in enabled
    assert s.hits.count("/robots.txt") == 1  # it was fetched twice, once by each
    assert "/private/b" not in s.hits


def test_ours_listed_by_hand_beside_scrapy_s_says_so_at_start_up(site, tmp_path):
    s = site("User-agent: *\nDisallow: /private\n")
    by_hand = json.dumps({"scrapy_robots.RobotsTxtMiddleware": 100})
    out = _crawl(tmp_path, s.url, {}, "-s", f"DOWNLOADER_MIDDLEWARES={by_hand}")
    assert out.returncode == 0, out.stderr[-3000:]
    warning = [line for line in out.stderr.splitlines() if "is enabled beside this one" in line]
    assert len(warning) == 1 and "WARNING" in warning[0]
    assert "ADDONS = {'scrapy_robots.Addon': 0}" in warning[0] and f"'{STOCK}': None" in warning[0]


@pytest.mark.parametrize("backoff", [True, False], ids=["on", "off"])
def test_the_add_on_enables_the_slow_down_extension_unless_it_is_off(site, tmp_path, backoff):
    # A site that says "slow down" on a page is heard by an extension (as AutoThrottle hears
    # latencies): the add-on lists it; ROBOTSTXT_BACKOFF = False makes it NotConfigured.
    s = site("User-agent: *\nDisallow: /private\n")
    out = _crawl(tmp_path, s.url, {}, "-s", f"ADDONS={ADDON}", "-s", f"ROBOTSTXT_BACKOFF={backoff}")
    assert out.returncode == 0, out.stderr[-3000:]
    start = out.stderr.index("Enabled extensions")
    extensions = out.stderr[start : out.stderr.index("]", start)]
    assert ("scrapy_robots.pace.backoff.PageBackoff" in extensions) is backoff
    assert "is not paused in this crawl" not in out.stderr
