"""RobotsReader: a robots.txt body becomes what the crawl asks of it.

The one place where an entry is made ready, whether its body was just fetched or
comes back from the storage: the parser the project chose (``ROBOTSTXT_PARSER``),
the usage preferences (``ROBOTSTXT_USAGE``, read by our own parser whatever the
backend) and the site's delay (``ROBOTSTXT_CRAWL_DELAY``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy.utils.misc import build_from_crawler

from scrapy_robots.delay import read_site_delay
from scrapy_robots.parsers import RobotParser, as_robot_parser, check_parser_class
from scrapy_robots.policy import Action
from scrapy_robots.usage import site_preferences

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from scrapy_robots.cache import RobotsEntry
    from scrapy_robots.config import RobotsConfig

logger = logging.getLogger(__name__)


class RobotsReader:
    def __init__(self, crawler: Crawler, config: RobotsConfig):
        self.crawler = crawler
        self.config = config
        self.agent = config.default_user_agent
        check_parser_class("ROBOTSTXT_PARSER", config.parser_class)
        # A backend that cannot import (reppy not built, say) fails here, at start-up.
        try:
            build_from_crawler(config.parser_class, crawler, b"")
        except Exception as exc:
            raise RuntimeError(f"ROBOTSTXT_PARSER = {config.parser_name} cannot be used: {exc}") from exc

    def ready(self, entry: RobotsEntry) -> RobotsEntry | None:
        """``entry`` with what its body gives (parser, usage, delay), built once. None
        for a parsed robots.txt that comes without its body (it left the storage).
        A body the parser cannot read makes the site allowed, as Scrapy's middleware does."""
        if entry.action is not Action.PARSE or entry.parser is not None:
            return entry
        if entry.body is None:
            return None
        entry.parser = self.parse(entry.body, entry.url)
        if entry.parser is None:
            entry.action = Action.ALLOW
            return entry
        if self.config.usage is not None:
            entry.usage = site_preferences(entry.body)
        if self.config.crawl_delay:
            config = self.config
            entry.delay = read_site_delay(entry.parser, self.agent, config.max_crawl_delay, config.crawl_delay_exceeded)
        return entry

    def parse(self, body: bytes, url: str | None) -> RobotParser | None:
        try:
            parser = build_from_crawler(self.config.parser_class, self.crawler, body)
        except Exception:
            logger.exception(
                "%(parser)s could not parse robots.txt from %(url)s; the site is allowed",
                {"parser": self.config.parser_name, "url": url or "?"},
                extra={"spider": self.crawler.spider},
            )
            self.crawler.stats.inc_value("robotstxt/parser_error")
            return None
        return as_robot_parser(parser, self.agent)
