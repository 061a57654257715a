"""Our own RFC 9309 parser (:mod:`scrapy_robots.rfc9309`): every directive, configurable."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy_robots.parsers.base import (
    ALLOW,
    CONTENT_USAGE,
    CRAWL_DELAY,
    HOST,
    REQUEST_RATE,
    SITEMAP,
    RequestRate,
    RobotParser,
)
from scrapy_robots.rfc9309 import AgentRules, Explanation, Options, RobotsTxt
from scrapy_robots.settings.config import RobotsConfig
from scrapy_robots.settings.config import rfc9309_options as options_from_settings  # noqa: F401 - documented

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler


class RFC9309Parser(RobotParser):
    SUPPORTED = frozenset({ALLOW, CRAWL_DELAY, REQUEST_RATE, SITEMAP, HOST, CONTENT_USAGE})

    def __init__(self, robotstxt_body: bytes | str, user_agent: str = "*", options: Options | None = None):
        super().__init__(robotstxt_body, user_agent)
        options = options or Options()
        self.rp = RobotsTxt.parse(
            robotstxt_body,
            precedence=options.precedence,
            wildcards=options.wildcards,
            empty_rules=options.empty_rules,
            agent_matching=options.agent_matching,
            product_tokens=options.product_tokens,
        )

    @classmethod
    def from_crawler(cls, crawler: Crawler, robotstxt_body: bytes) -> Self:
        # Built for every robots.txt of the crawl: its settings read once per crawler.
        config = RobotsConfig.of(crawler)
        return cls(robotstxt_body, user_agent=config.default_user_agent, options=config.rfc9309)

    def _agent(self, user_agent: str | bytes | None) -> str:
        # RobotsTxt reduces a full header to its product token itself (and
        # "substring" agent matching needs the full header).
        agent = user_agent or self.user_agent
        return agent.decode("latin-1") if isinstance(agent, bytes) else agent

    def allowed(self, url: str | bytes, user_agent: str | bytes | None = None) -> bool:
        return self.rp.allowed(url, self._agent(user_agent))

    def explain(self, url: str | bytes, user_agent: str | bytes | None = None) -> Explanation:
        """Which group and which line decide ``url``; see
        :meth:`RobotsTxt.explain() <scrapy_robots.rfc9309.RobotsTxt.explain>`."""
        return self.rp.explain(url, self._agent(user_agent))

    def crawl_delay(self, user_agent: str | bytes | None = None) -> float | None:
        return self.rp.crawl_delay(self._agent(user_agent))

    def request_rate(self, user_agent: str | bytes | None = None) -> RequestRate | None:
        return self._rate(self.rp.request_rate(self._agent(user_agent)))

    def sitemaps(self) -> list[str]:
        return list(self.rp.sitemaps)

    def preferred_host(self) -> str | None:
        return self.rp.host

    def usage_preferences(self, user_agent: str | bytes | None = None) -> tuple[tuple[int, str, str], ...]:
        return self.rp.preference_lines(self._agent(user_agent))

    def reduce(self, user_agent: str | bytes) -> tuple[AgentRules, str] | None:
        """What ``user_agent`` obeys, as :class:`~scrapy_robots.rfc9309.AgentRules`: its
        rules compiled for verdicts only, its Crawl-delay and Request-rate."""
        cls = type(self)
        if any(getattr(cls, name) is not getattr(RFC9309Parser, name) for name in _REDUCED):
            return None  # a subclass that answers otherwise: kept whole
        return self.rp.agent_rules(self._agent(user_agent))

    @classmethod
    def restore(cls, form: str) -> Any | None:
        try:
            return AgentRules.loads(form)
        except ValueError:
            return None


#: What AgentRules answers in RFC9309Parser's stead.
_REDUCED = ("allowed", "crawl_delay", "request_rate")
