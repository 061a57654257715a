"""The one-line add-on: ``ADDONS = {"scrapy_robots.Addon": 0}``."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

STOCK = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"
OURS = "scrapy_robots.middleware.RobotsTxtMiddleware"
USAGE = "scrapy_robots.spidermw.UsageMiddleware"


class Addon:
    """Swaps Scrapy's robots.txt middleware for ours, at the stock one's priority."""

    def update_settings(self, settings: BaseSettings) -> None:
        # DOWNLOADER_MIDDLEWARES is a settings object of its own: changing it in place
        # keeps what the project put there, whatever the priority it was set with.
        middlewares = settings["DOWNLOADER_MIDDLEWARES"]
        priority = settings.getdict("DOWNLOADER_MIDDLEWARES_BASE").get(STOCK, 100)
        middlewares[STOCK] = None
        middlewares[OURS] = priority
        # The Content-Usage header reader; NotConfigured unless ROBOTSTXT_USAGE is set.
        spider_middlewares = settings["SPIDER_MIDDLEWARES"]
        if USAGE not in spider_middlewares:
            spider_middlewares[USAGE] = 100
