"""Never silently wrong (issue 48): every setting a crawl was given is obeyed, or named at
start-up. A by-hand setup without a component its features need (real `scrapy crawl`
runs, with the docs' recipe and without), a misspelt ``ROBOTSTXT_*`` name, a fleet's
setting without the fleet, where robots.txt is kept, and a bad setting named as the
package's, not as the component Scrapy happened to build first."""

from __future__ import annotations

import ast
import json
import logging
import re
import textwrap
from pathlib import Path

import pytest
import pytest_twisted
from crawling import BASE_SETTINGS, RecordingSpider, crawl
from scrapy.settings import Settings
from servers import body

from scrapy_robots.addon import Addon
from scrapy_robots.cache import RobotsEntry
from scrapy_robots.directives.middleware import DirectivesMiddleware
from scrapy_robots.settings.components import PARTS
from scrapy_robots.settings.defaults import DEFAULTS, PRIVATE
from scrapy_robots.settings.errors import SettingError
from scrapy_robots.settings.parts import FleetConfig
from scrapy_robots.settings.startup import unknown_settings

ROOT = Path(__file__).resolve().parent.parent
ROBOTS = body("User-agent: *\nDisallow: /private\n")
ADDON = {"scrapy_robots.Addon": 0}
DIRECTIVES = "scrapy_robots.directives.middleware.DirectivesMiddleware"
USAGE = "scrapy_robots.spidermw.UsageMiddleware"
BACKOFF = "scrapy_robots.pace.backoff.PageBackoff"
PAGE_LINKS = "scrapy_robots.policyfiles.page_links.PageLinksMiddleware"
#: The robots.txt middleware by hand with the reader of the licenses pages link to (ROBOTSTXT_RSL, on with a usage).
WITH_PAGE_LINKS = {"DOWNLOADER_MIDDLEWARES": {**BASE_SETTINGS["DOWNLOADER_MIDDLEWARES"], PAGE_LINKS: 540}}
MISSING = "is enabled without the components its features need"
STORAGE_LINE = "scrapy-robots keeps robots.txt"


def html(head: str = "", links: str = "", headers: tuple[tuple[str, str], ...] = ()):
    data = f"<html><head><title>t</title>{head}</head><body>{links}</body></html>".encode()

    def handle(request):
        request.setHeader(b"Content-Type", b"text/html")
        for name, value in headers:
            request.responseHeaders.addRawHeader(name.encode(), value.encode())
        return data

    return handle


def said(caplog, text: str, level: int = logging.WARNING) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == level and text in r.getMessage()]


# -- a by-hand setup, in real `scrapy crawl` runs -------------------------------------------

PAGES = {
    "/tagged": html(links='<a href="/a">a</a>', headers=(("X-Robots-Tag", "nofollow"),)),
    "/meta": html('<meta name="robots" content="nofollow">', '<a href="/b">b</a>'),
    "/open": html(links='<a href="/c">c</a>'),
    "/hidden": html(headers=(("X-Robots-Tag", "noindex"),)),
    "/ai": html(headers=(("Content-Usage", "train-ai=n"),)),
    "/noai": html(headers=(("X-Robots-Tag", "noai"),)),
    "/.well-known/tdmrep.json": body("", status=404),  # TDMRep is read for train-ai: none here
}
PROJECT = """
BOT_NAME = "handbot"
SPIDER_MODULES = ["handbot.spiders"]
TELNETCONSOLE_ENABLED = False
ROBOTSTXT_OBEY = True
ROBOTSTXT_USAGE = ["train-ai"]
"""
SPIDER = """
import scrapy

class Pages(scrapy.Spider):
    name = "pages"

    def __init__(self, urls="", **kwargs):
        super().__init__(**kwargs)
        self.start_urls = urls.split()

    def parse(self, response):
        yield {"path": response.url.split("/", 3)[3]}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, callback=self.parse)
"""
#: The by-hand setup README.md and docs/middleware.rst gave before issue 48: no spider middleware.
OLD_RECIPE = """
DOWNLOADER_MIDDLEWARES = {
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
    "scrapy_robots.RobotsTxtMiddleware": 100,
}
EXTENSIONS = {"scrapy_robots.pace.backoff.PageBackoff": 0}
"""


def readme_recipe() -> str:
    text = (ROOT / "README.md").read_text()
    return text.split("or by hand:\n\n```python\n", 1)[1].split("```", 1)[0]


def middleware_page_recipe() -> str:
    text = (ROOT / "docs" / "middleware.rst").read_text()
    block = text.split("or, by hand, every component the add-on lists::\n\n", 1)[1]
    lines = []
    for line in block.splitlines():
        if line and not line.startswith(" "):
            break
        lines.append(line)
    return textwrap.dedent("\n".join(lines))


def components(recipe: str) -> dict:
    found: dict = {}
    exec(recipe, {}, found)
    return {name: value for name, value in found.items() if name != "ROBOTSTXT_OBEY"}


async def scrapy_crawl(tmp_path: Path, site, recipe: str) -> tuple[dict, list[dict]]:
    from processes import result_file, start_process
    from test_stopping import ended

    (tmp_path / "scrapy.cfg").write_text("[settings]\ndefault = handbot.settings\n")
    (tmp_path / "handbot" / "spiders").mkdir(parents=True)
    (tmp_path / "handbot" / "__init__.py").write_text("")
    (tmp_path / "handbot" / "settings.py").write_text(PROJECT + recipe)
    (tmp_path / "handbot" / "spiders" / "__init__.py").write_text(SPIDER)
    urls = " ".join(f"{site.url}{path}" for path in PAGES if not path.startswith("/."))
    args = ["crawl", "pages", "-a", f"urls={urls}", "-O", "items.jsonl"]
    result = await ended(start_process(args, result_file("hand-"), tmp_path), timeout=60)
    assert result["exit"] == 0, result["log"][-3000:]
    items = [json.loads(line) for line in (tmp_path / "items.jsonl").read_text().splitlines()]
    return result, items


def test_the_docs_give_one_recipe_and_it_lists_every_component():
    readme, page = components(readme_recipe()), components(middleware_page_recipe())
    assert readme == page
    for part in PARTS:  # the add-on's table: nothing it lists is left out of the recipe
        assert readme[part.setting][part.path] == part.order, part.path


@pytest_twisted.ensureDeferred
async def test_by_hand_without_the_spider_middlewares_one_warning_names_them(serve, tmp_path):
    site = serve(ROBOTS, dict(PAGES))
    result, items = await scrapy_crawl(tmp_path, site, OLD_RECIPE)
    log = result["log"]
    warnings = [line for line in log.splitlines() if MISSING in line]
    assert len(warnings) == 1 and " WARNING: " in warnings[0], log[-3000:]
    # Each missing component and the line that adds it; the extension is listed.
    assert f'SPIDER_MIDDLEWARES = {{"{DIRECTIVES}": 90, "{USAGE}": 100, ...}}' in warnings[0]
    assert "EXTENSIONS" not in warnings[0] and BACKOFF not in warnings[0]
    assert "ROBOTSTXT_DIRECTIVES is on" in warnings[0] and "ROBOTSTXT_USAGE is on" in warnings[0]
    # What it warns of: the crawl follows nofollow pages' links and keeps every item.
    assert {"/a", "/b", "/c"} <= set(site.paths())
    assert {item["path"] for item in items} == {"tagged", "meta", "open", "hidden", "ai", "noai", "a", "b", "c"}
    assert not any("robots_noindex" in item for item in items)


@pytest_twisted.ensureDeferred
async def test_by_hand_with_the_docs_recipe_the_page_is_obeyed_and_nothing_is_warned(serve, tmp_path):
    site = serve(ROBOTS, dict(PAGES))
    result, items = await scrapy_crawl(tmp_path, site, readme_recipe())
    log = result["log"]
    assert MISSING not in log
    assert not [line for line in log.splitlines() if "[scrapy_robots" in line and " WARNING: " in line], log[-3000:]
    paths = set(site.paths())
    assert "/c" in paths and "/a" not in paths and "/b" not in paths  # nofollow, header and meta
    kept = {item["path"]: item for item in items}
    assert set(kept) == {"tagged", "meta", "open", "hidden", "c"}  # train-ai=n and noai: dropped
    assert kept["hidden"].get("robots_noindex") is True and "robots_noindex" not in kept["open"]


# -- the components, in-process crawls of every arrangement ------------------------------------


class OwnDirectives(DirectivesMiddleware):
    """A project's subclass of the directives middleware: the component, under another name."""


def by_hand(**spider_middlewares: int | None) -> dict:
    return {"SPIDER_MIDDLEWARES": spider_middlewares}


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({}, [DIRECTIVES]),  # README's old recipe: the directives are on by default
        ({"ROBOTSTXT_USAGE": ["train-ai"]}, [DIRECTIVES, USAGE, PAGE_LINKS]),
        ({"ROBOTSTXT_USAGE": ["train-ai"], "ROBOTSTXT_RSL": False}, [DIRECTIVES, USAGE]),
        ({"ROBOTSTXT_DIRECTIVES": False}, []),
        ({"ROBOTSTXT_DIRECTIVES": False, "EXTENSIONS": {}}, [BACKOFF]),
        ({"ROBOTSTXT_USAGE": ["train-ai"], "EXTENSIONS": {}}, [DIRECTIVES, USAGE, PAGE_LINKS, BACKOFF]),
        ({"ROBOTSTXT_USAGE": ["train-ai"], **WITH_PAGE_LINKS, **by_hand(**{DIRECTIVES: 90, USAGE: 100})}, []),
        # Under another name, a subclass: the component all the same.
        (
            {
                "ROBOTSTXT_USAGE": ["ai-train"],
                **WITH_PAGE_LINKS,
                **by_hand(**{f"{__name__}.OwnDirectives": 90, "scrapy_robots.UsageMiddleware": 100}),
            },
            [],
        ),
        ({"ROBOTSTXT_USAGE": ["train-ai"], **WITH_PAGE_LINKS, **by_hand(**{DIRECTIVES: 90, USAGE: None})}, [USAGE]),
        ({"ADDONS": ADDON, "EXTENSIONS": {}}, []),
        ({"ADDONS": ADDON, "ROBOTSTXT_USAGE": ["train-ai"]}, []),
        # Disabled on purpose while its feature is on: the add-on keeps it off, and says so.
        ({"ADDONS": ADDON, **by_hand(**{DIRECTIVES: None})}, [DIRECTIVES]),
    ],
    ids=[
        "old-recipe",
        "usage",
        "usage-without-rsl",
        "directives-off",
        "no-extension",
        "none-of-three",
        "complete",
        "other-names",
        "usage-disabled",
        "add-on",
        "add-on-usage",
        "add-on-directives-disabled",
    ],
)
@pytest_twisted.ensureDeferred
async def test_each_missing_component_is_named_once_with_its_line(serve, caplog, settings, named):
    site = serve(ROBOTS)
    caplog.set_level(logging.INFO, logger="scrapy_robots")
    crawler = await crawl([f"{site.url}/a"], **settings)
    assert crawler.spider.downloaded == [f"{site.url}/a"]
    warnings = said(caplog, MISSING)
    assert len(warnings) == (1 if named else 0), warnings
    for part in PARTS:
        assert (f'"{part.path}": {part.order}' in "".join(warnings)) is (part.path in named), part.path


class HandListedSpider(RecordingSpider):
    """Lists the robots.txt middleware in its own custom_settings, without the rest."""

    custom_settings = {
        "DOWNLOADER_MIDDLEWARES": BASE_SETTINGS["DOWNLOADER_MIDDLEWARES"],
        "ROBOTSTXT_USAGE": ["train-ai"],
    }


@pytest_twisted.ensureDeferred
async def test_a_spider_that_lists_the_middleware_in_custom_settings_is_told_too(serve, caplog):
    site = serve(ROBOTS)
    caplog.set_level(logging.WARNING, logger="scrapy_robots")
    await crawl([f"{site.url}/a"], HandListedSpider, DOWNLOADER_MIDDLEWARES={})
    [warning] = said(caplog, MISSING)
    assert f'"{DIRECTIVES}": 90, "{USAGE}": 100' in warning


def test_the_add_on_lists_the_table_the_check_reads():
    settings = Settings()
    Addon().update_settings(settings)
    for part in PARTS:
        assert settings[part.setting][part.path] == part.order


# -- unknown names ----------------------------------------------------------------------------


def misspellings(name: str) -> list[str]:
    """One letter dropped (the last, one in the middle of the part after the prefix), an S added."""
    suffix = name[len("ROBOTSTXT_") :]
    middle = len(suffix) // 2
    if suffix[middle] == "_":
        middle += 1
    return [name[:-1], f"ROBOTSTXT_{suffix[:middle]}{suffix[middle + 1 :]}", name + "S"]


@pytest.mark.parametrize("name", list(DEFAULTS))
def test_every_known_name_is_quiet_and_each_misspelling_names_it(name):
    assert unknown_settings(Settings({name: "1"})) == []
    for wrong in misspellings(name):
        assert wrong not in DEFAULTS
        assert unknown_settings(Settings({name: "1", wrong: "1"})) == [(wrong, name)], wrong


def test_what_is_not_ours_is_not_judged():
    # Scrapy's own defaults, names without our prefix, the names the package sets itself.
    settings = Settings({"ROBOTS_TXT_OBEY": True, "MY_ROBOTSTXT_CACHE": 1, "REDIS_URL": "redis://x"})
    for name in PRIVATE:
        settings.set(name, False)
    assert unknown_settings(settings) == []
    # A name in the wrong case is ours, and is not read: Scrapy's settings are case-sensitive.
    assert unknown_settings(Settings({"robotstxt_obey": True, "ROBOTSTXT_NOTHING_LIKE_IT": 1})) == [
        ("ROBOTSTXT_NOTHING_LIKE_IT", None),
        ("robotstxt_obey", "ROBOTSTXT_OBEY"),
    ]


def test_every_robotstxt_name_in_the_code_is_a_known_one():
    # A setting read (or named to the user) that is not in the table would be called
    # unknown at start-up: each goes into DEFAULTS, or PRIVATE when the package sets it itself.
    pattern = re.compile(r"\b_?ROBOTSTXT_[A-Z0-9_]*[A-Z0-9]\b")
    found: set[str] = set()
    for path in (ROOT / "scrapy_robots").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.update(pattern.findall(node.value))
    assert "ROBOTSTXT_RECORD" in found and "_ROBOTSTXT_ONE_SHOT" in found
    assert sorted(found - set(DEFAULTS) - PRIVATE) == []


class MisspeltSpider(RecordingSpider):
    custom_settings = {"ROBOTSTXT_CRAWL_DELAYS": False}


@pytest.mark.parametrize("obey", [True, False], ids=["obeying", "off"])
@pytest.mark.parametrize("arrangement", ["add-on", "by-hand"])
@pytest_twisted.ensureDeferred
async def test_misspelt_names_are_said_once_per_crawl_wherever_they_are_given(
    serve, caplog, tmp_path, obey, arrangement
):
    site = serve(ROBOTS)
    caplog.set_level(logging.INFO, logger="scrapy_robots")
    extra = {"ADDONS": ADDON} if arrangement == "add-on" else {}
    record = tmp_path / "rec"
    await crawl(
        [f"{site.url}/a"],
        MisspeltSpider,
        ROBOTSTXT_OBEY=obey,
        ROBOTSTXT_RECORDS=str(record),
        ROBOTSTXT_OBEYY=True,
        **extra,
    )
    unknown = said(caplog, "is not a scrapy-robots setting")
    assert sorted(unknown) == [
        "ROBOTSTXT_CRAWL_DELAYS is not a scrapy-robots setting and is ignored: did you mean ROBOTSTXT_CRAWL_DELAY?",
        "ROBOTSTXT_OBEYY is not a scrapy-robots setting and is ignored: did you mean ROBOTSTXT_OBEY?",
        "ROBOTSTXT_RECORDS is not a scrapy-robots setting and is ignored: did you mean ROBOTSTXT_RECORD?",
    ]
    assert not record.exists()  # ignored, as said
    # Off, the rest is not said: nothing of the package runs.
    assert len(said(caplog, STORAGE_LINE, logging.INFO)) == (1 if obey else 0)


# -- where robots.txt is kept, and a fleet's settings without the fleet -----------------------


class OwnStorage:
    """A storage of one's own that does not describe itself (no RobotsStorage subclass)."""

    def __init__(self):
        self.entries: dict[str, RobotsEntry] = {}

    async def load(self, site):
        return self.entries.get(site)

    async def save(self, entry):
        self.entries[entry.site] = entry

    def pacer(self):
        return None

    def load_now(self, site):
        return None

    async def fetch_once(self, site, fetch):
        entry = await fetch()
        await self.save(entry)
        return entry

    async def close(self):
        pass


@pytest.mark.parametrize(
    ("settings", "line"),
    [
        ({}, "in memory (up to 100000 sites); each site is paced by this crawler alone"),
        ({"ROBOTSTXT_CACHE_SIZE": 50}, "in memory (up to 50 sites); each site is paced by this crawler alone"),
        ({"JOBDIR": "{tmp}/job"}, "in SQLite at {tmp}/job/robotstxt.sqlite3; each site is paced by this crawler alone"),
        ({"ROBOTSTXT_CACHE_STORAGE": f"{__name__}.OwnStorage"}, f"in {__name__}.OwnStorage; each site is paced"),
    ],
    ids=["memory", "memory-sized", "sqlite", "own"],
)
@pytest_twisted.ensureDeferred
async def test_one_info_line_says_where_robots_txt_is_kept(serve, caplog, tmp_path, settings, line):
    site = serve(ROBOTS)
    caplog.set_level(logging.INFO, logger="scrapy_robots")
    settings = {
        name: value.format(tmp=tmp_path) if isinstance(value, str) else value for name, value in settings.items()
    }
    crawler = await crawl([f"{site.url}/a", f"{site.url}/private"], **settings)
    assert list(crawler.spider.ignored) == [f"{site.url}/private"]
    [info] = said(caplog, STORAGE_LINE, logging.INFO)
    assert line.format(tmp=tmp_path) in info
    assert not said(caplog, "looks like one of a fleet")


@pytest_twisted.ensureDeferred
async def test_fleet_settings_without_the_fleet_are_one_warning_naming_the_storage(serve, caplog, redis):
    site = serve(ROBOTS)
    caplog.set_level(logging.INFO, logger="scrapy_robots")
    await crawl([f"{site.url}/a"], ROBOTSTXT_REDIS_URL=redis.url, ROBOTSTXT_FLEET_PACING=True)
    [warning] = said(caplog, "looks like one of a fleet")
    assert warning.startswith("ROBOTSTXT_REDIS_URL is set; ROBOTSTXT_FLEET_PACING is set: ")
    assert "keeps robots.txt in memory (up to 100000 sites)" in warning
    assert "ROBOTSTXT_CACHE_STORAGE = 'scrapy_robots.fleet.RedisRobotsStorage'" in warning
    # The same settings with the fleet's storage: the line says so, and nothing is warned.
    caplog.clear()
    await crawl(
        [f"{site.url}/a"],
        ROBOTSTXT_CACHE_STORAGE="scrapy_robots.fleet.RedisRobotsStorage",
        ROBOTSTXT_REDIS_URL=redis.url,
        ROBOTSTXT_REDIS_KEY_PREFIX="startup-test",
    )
    assert not said(caplog, "looks like one of a fleet")
    [info] = said(caplog, STORAGE_LINE, logging.INFO)
    assert f"for the fleet in a single Redis ({redis.url}), under the key prefix 'startup-test'" in info
    assert "each site is paced across the fleet" in info
    caplog.clear()
    await crawl(
        [f"{site.url}/a"],
        ROBOTSTXT_CACHE_STORAGE="scrapy_robots.fleet.RedisRobotsStorage",
        ROBOTSTXT_REDIS_URL=redis.url,
        ROBOTSTXT_FLEET_PACING=False,
    )
    [info] = said(caplog, STORAGE_LINE, logging.INFO)
    assert "each site is paced by this crawler alone" in info


@pytest_twisted.ensureDeferred
async def test_scrapy_redis_shared_queue_without_the_fleet_is_warned(serve, caplog, redis):
    # A crawler of a scrapy-redis fleet (tests/fleet_project's queue settings) that keeps
    # robots.txt in memory: each of N such crawlers would pace the site alone.
    site = serve(ROBOTS)
    caplog.set_level(logging.INFO, logger="scrapy_robots")
    queue = {
        "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
        "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
        "REDIS_URL": redis.url,
        "SCHEDULER_FLUSH_ON_START": True,
    }
    crawler = await crawl([f"{site.url}/a"], **queue)
    assert crawler.spider.downloaded == [f"{site.url}/a"]
    [warning] = said(caplog, "looks like one of a fleet")
    assert warning.startswith("SCHEDULER is scrapy-redis' queue, shared by the crawlers (scrapy_redis.scheduler.")
    assert "ROBOTSTXT_CACHE_STORAGE = 'scrapy_robots.fleet.RedisRobotsStorage'" in warning
    # The fleet's storage beside it (REDIS_URL serves both): nothing to warn of.
    caplog.clear()
    await crawl([f"{site.url}/b"], ROBOTSTXT_CACHE_STORAGE="scrapy_robots.fleet.RedisRobotsStorage", **queue)
    assert not said(caplog, "looks like one of a fleet")
    [info] = said(caplog, STORAGE_LINE, logging.INFO)
    assert f"for the fleet in a single Redis ({redis.url})" in info


@pytest.mark.parametrize(
    ("fleet", "where"),
    [
        ({"redis_url": "redis://:secret@10.0.0.5:6379/0"}, "a single Redis (redis://10.0.0.5:6379/0)"),
        ({"redis_url": "rediss://bob:secret@host:6380/2"}, "a single Redis (rediss://bob@host:6380/2)"),
        ({"redis_url": "unix:///run/redis.sock?db=1&password=secret"}, "a single Redis (unix:///run/redis.sock?db=1)"),
        (
            {"redis_url": "redis://:secret@10.0.0.5:7000", "cluster": True},
            "Redis Cluster (through the node redis://10.0.0.5:7000)",
        ),
        (
            {"redis_url": "redis://:secret@/0", "sentinels": (("10.0.0.1", 26379), ("10.0.0.2", 26379))},
            "Redis Sentinel (the primary 'mymaster' of 10.0.0.1:26379, 10.0.0.2:26379)",
        ),
    ],
    ids=["single", "user", "socket", "cluster", "sentinel"],
)
def test_the_fleet_is_named_as_deployed_without_its_password(fleet, where):
    config = FleetConfig(**{"prefix": "p", "timeout": 1, "connections": 1, "lock_ttl": 1, "lock_wait": 1,
                            "pacing": True, "pacing_margin": 0, **fleet})  # fmt: skip
    assert config.where() == where
    assert "secret" not in config.where()


# -- a bad setting, named as the package's ----------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "value", "message"),
    [
        ("ROBOTSTXT_USAGE", ["trian-ai"], "ROBOTSTXT_USAGE: unknown purpose 'trian-ai'"),
        ("ROBOTSTXT_MAXSIZE", -1, "ROBOTSTXT_MAXSIZE must be a finite whole number >= 1"),
    ],
)
@pytest.mark.parametrize("arrangement", ["add-on", "by-hand"])
@pytest_twisted.ensureDeferred
async def test_a_bad_setting_is_the_package_s_error_not_a_component_s(
    serve, caplog, setting, value, message, arrangement
):
    site = serve(ROBOTS)
    caplog.set_level(logging.INFO)
    extra = {"ADDONS": ADDON} if arrangement == "add-on" else {}
    with pytest.raises(SettingError):
        await crawl([f"{site.url}/a"], **{setting: value}, **extra)
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"scrapy-robots cannot start: {message}"), errors[0]
    for component in ("PageBackoff", "RobotsTxtMiddleware", "DirectivesMiddleware", "UsageMiddleware"):
        assert component not in errors[0]
    assert site.paths() == []


@pytest.mark.parametrize("jobdir", [False, True], ids=["no-path", "jobdir"])
@pytest_twisted.ensureDeferred
async def test_the_disk_storage_without_a_file_is_one_error_naming_the_settings(serve, caplog, tmp_path, jobdir):
    # SqliteRobotsStorage chosen by name, with no ROBOTSTXT_CACHE_PATH: one ERROR line naming
    # the settings that give it a file (it was a traceback); with a JOBDIR beside it, no error.
    site = serve(ROBOTS)
    caplog.set_level(logging.INFO)
    settings = {"ROBOTSTXT_CACHE_STORAGE": "scrapy_robots.cache.SqliteRobotsStorage"}
    if jobdir:
        crawler = await crawl([f"{site.url}/a"], **settings, JOBDIR=str(tmp_path / "job"))
        assert crawler.spider.downloaded == [f"{site.url}/a"]
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
        return
    with pytest.raises(SettingError):
        await crawl([f"{site.url}/a"], **settings)
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1, [r.getMessage() for r in errors]
    assert "ROBOTSTXT_CACHE_PATH" in errors[0].getMessage() and "JOBDIR" in errors[0].getMessage()
    assert errors[0].exc_info is None  # the line is the whole story: no traceback
