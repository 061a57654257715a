"""An RFC 9309 robots.txt parser: pure Python, Google-compatible, configurable, fast.

Usable without Scrapy::

    from scrapy_robots.rfc9309 import RobotsTxt

    robots = RobotsTxt.parse(body)
    robots.allowed("https://example.com/private/x", "FooBot")
    print(robots.explain("https://example.com/private/x", "FooBot"))

Anything else that reads robots.txt (a linter, statistics) subclasses
:class:`RobotsTxtHandler` (every line as an event) or :class:`GroupBuilder` (the
groups as RFC 9309 forms them) and walks the file with :func:`parse_robotstxt`.
"""

from __future__ import annotations

from scrapy_robots.rfc9309._agent import AgentRules
from scrapy_robots.rfc9309._agents import select_groups
from scrapy_robots.rfc9309._groups import Group, GroupBuilder
from scrapy_robots.rfc9309._matcher import Rule
from scrapy_robots.rfc9309._names import agent_key, name_key
from scrapy_robots.rfc9309._options import (
    AGENT_MATCHINGS,
    EMPTY_RULES,
    PRECEDENCES,
    PRODUCT_TOKENS,
    AgentMatching,
    EmptyRules,
    Options,
    Precedence,
    ProductTokens,
)
from scrapy_robots.rfc9309._robotstxt import Explanation, RobotsTxt
from scrapy_robots.rfc9309._tokenizer import (
    ALLOW,
    CLEAN_PARAM,
    CONTENT_SIGNAL,
    CONTENT_USAGE,
    CRAWL_DELAY,
    DISALLOW,
    HOST,
    LICENSE,
    REQUEST_RATE,
    SITEMAP,
    USER_AGENT,
    VISIT_TIME,
    RobotsTxtHandler,
    directive_of,
    parse_robotstxt,
)
from scrapy_robots.rfc9309._url import normalize, normalize_url_path, path_of
from scrapy_robots.rfc9309._values import (
    CleanParam,
    RequestRate,
    VisitTime,
    parse_clean_param,
    parse_crawl_delay,
    parse_request_rate,
    parse_visit_time,
)

__all__ = [
    "AgentRules",
    "AGENT_MATCHINGS",
    "ALLOW",
    "CLEAN_PARAM",
    "CONTENT_SIGNAL",
    "CONTENT_USAGE",
    "CRAWL_DELAY",
    "DISALLOW",
    "EMPTY_RULES",
    "HOST",
    "LICENSE",
    "PRECEDENCES",
    "PRODUCT_TOKENS",
    "REQUEST_RATE",
    "SITEMAP",
    "USER_AGENT",
    "VISIT_TIME",
    "AgentMatching",
    "CleanParam",
    "EmptyRules",
    "Explanation",
    "Group",
    "GroupBuilder",
    "Options",
    "Precedence",
    "ProductTokens",
    "RequestRate",
    "RobotsTxt",
    "RobotsTxtHandler",
    "Rule",
    "VisitTime",
    "agent_key",
    "directive_of",
    "name_key",
    "normalize",
    "normalize_url_path",
    "parse_clean_param",
    "parse_crawl_delay",
    "parse_request_rate",
    "parse_robotstxt",
    "parse_visit_time",
    "path_of",
    "select_groups",
]
