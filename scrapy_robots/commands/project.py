"""Which robots.txt middleware the project's ``scrapy crawl`` runs, and the settings
with which ``scrapy robots`` answers as that crawl would."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy_robots.addon import OURS, STOCK, Addon
from scrapy_robots.commands.query import class_name
from scrapy_robots.settings.readers import read_bool

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

ADDON = "scrapy_robots.Addon"
# The names a project may give the middlewares. Matched as text: importing ours (or a
# project's middlewares) before Scrapy installs its reactor would install the default one.
OUR_MIDDLEWARE_NAMES = frozenset({OURS, "scrapy_robots.RobotsTxtMiddleware"})
OUR_ADDON_NAMES = frozenset({ADDON, "scrapy_robots.addon.Addon"})
#: The answers the command gives: ours, or those of Scrapy's own middleware.
SCRAPY_ROBOTS, SCRAPY_STOCK = "scrapy_robots.RobotsTxtMiddleware", STOCK
# What the command changes to answer as Scrapy's own middleware does: it parses the
# body whatever the status, allows all on a network error, reads no Crawl-delay and
# excludes no domain.
STOCK_BEHAVIOUR = {
    "ROBOTSTXT_STATUS_POLICY": "scrapy",
    "ROBOTSTXT_CRAWL_DELAY": False,
    "ROBOTSTXT_EXCLUDED_DOMAINS": [],
}


def component_name(key: Any) -> str:
    return key if isinstance(key, str) else f"{getattr(key, '__module__', '')}.{getattr(key, '__qualname__', key)}"


def crawl_middleware(settings: BaseSettings) -> str | None:
    """The robots.txt middleware ``scrapy crawl`` runs with ``settings``: ours (by the
    add-on or by hand, under either name), Scrapy's own, or None (neither is enabled)."""
    for key, priority in settings["ADDONS"].items():
        if priority is None:
            continue
        if component_name(key) in OUR_ADDON_NAMES or (isinstance(key, type) and issubclass(key, Addon)):
            return SCRAPY_ROBOTS
    enabled = {
        component_name(key)
        for key, order in settings.getwithbase("DOWNLOADER_MIDDLEWARES").items()
        if order is not None
    }
    if enabled & OUR_MIDDLEWARE_NAMES:
        return SCRAPY_ROBOTS
    return SCRAPY_STOCK if STOCK in enabled else None


def choose_middleware(settings: BaseSettings, notes: list[str]) -> str:
    """Answer as the project's crawl would: with Scrapy's own middleware if that is
    the one its settings enable (emulated by ours with Scrapy's behaviour), else
    with ours; ``notes`` say so when it matters."""
    from scrapy.utils.project import inside_project

    current = crawl_middleware(settings)
    in_project = inside_project()
    if in_project and not read_bool(settings, "ROBOTSTXT_OBEY"):
        notes.append(
            "ROBOTSTXT_OBEY is False in this project: `scrapy crawl` does not check robots.txt; "
            "these are the answers it would give if it did"
        )
    settings.set("ROBOTSTXT_OBEY", True, priority="cmdline")
    if current != SCRAPY_ROBOTS:
        # The add-on enables ours in place of Scrapy's; a project that enables ours
        # already (under either name) would get it twice, with Scrapy's warning.
        settings["ADDONS"].set(ADDON, 0, priority="cmdline")
    if not in_project or current == SCRAPY_ROBOTS:
        return SCRAPY_ROBOTS
    if current is None:
        notes.append(
            "this project enables no robots.txt middleware (DOWNLOADER_MIDDLEWARES): `scrapy crawl` "
            "checks no robots.txt; these are the answers of scrapy_robots.RobotsTxtMiddleware"
        )
        return SCRAPY_ROBOTS
    parser = settings.get("ROBOTSTXT_PARSER")
    settings.set("ROBOTSTXT_PARSER", parser, priority="cmdline")
    for name, value in STOCK_BEHAVIOUR.items():
        settings.set(name, value, priority="cmdline")
    notes.append(
        f"this project crawls with Scrapy's own RobotsTxtMiddleware ({STOCK}), so these are its answers: "
        f"robots.txt parsed with {class_name(parser).rsplit('.', 1)[-1]} whatever the HTTP status, a network "
        "error allows all, no Crawl-delay. For scrapy_robots' answers: "
        "-s 'ADDONS={\"scrapy_robots.Addon\": 0}' (or enable it in settings.py)"
    )
    return SCRAPY_STOCK
