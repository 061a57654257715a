"""The one-line add-on: ``ADDONS = {"scrapy_robots.Addon": 0}``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.settings import SETTINGS_PRIORITIES

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

STOCK = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"
OURS = "scrapy_robots.middleware.RobotsTxtMiddleware"
USAGE = "scrapy_robots.spidermw.UsageMiddleware"
DIRECTIVES = "scrapy_robots.directives.middleware.DirectivesMiddleware"
#: The "slow down" extension (pace/backoff.py): its path here, not imported, as the others.
BACKOFF = "scrapy_robots.pace.backoff.PageBackoff"


class Addon:
    """Swaps Scrapy's robots.txt middleware for ours, at the stock one's priority."""

    def update_settings(self, settings: BaseSettings) -> None:
        # DOWNLOADER_MIDDLEWARES is a settings object of its own: changing it in place
        # keeps what the project put there, whatever the priority it was set with.
        middlewares = settings["DOWNLOADER_MIDDLEWARES"]
        order = settings.getdict("DOWNLOADER_MIDDLEWARES_BASE").get(STOCK, 100)
        # Scrapy's middleware may be listed again with a higher priority than a project's
        # (a spider's custom_settings, -s): disabled at that priority, or it runs beside ours.
        middlewares.set(STOCK, None, priority=max(middlewares.getpriority(STOCK) or 0, SETTINGS_PRIORITIES["project"]))
        middlewares[OURS] = order
        # The Content-Usage header reader; NotConfigured unless ROBOTSTXT_USAGE is set.
        spider_middlewares = settings["SPIDER_MIDDLEWARES"]
        if USAGE not in spider_middlewares:
            spider_middlewares[USAGE] = 100
        # The page's robots directives (directives/); before the usage reader, which reads
        # its noai. NotConfigured with ROBOTSTXT_DIRECTIVES = False.
        if DIRECTIVES not in spider_middlewares:
            spider_middlewares[DIRECTIVES] = 90
        # A site that says "slow down" on a page (pace/backoff.py), heard as AutoThrottle
        # hears latencies; NotConfigured with ROBOTSTXT_BACKOFF = False.
        extensions = settings["EXTENSIONS"]
        if BACKOFF not in extensions:
            extensions[BACKOFF] = 0
