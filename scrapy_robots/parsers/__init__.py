"""The parser interface and one thin adapter per robots.txt library.

Backends are imported lazily: naming ``ReppyParser`` does not need reppy until a
file is parsed with it.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from scrapy_robots.parsers.base import (
    ALLOW,
    CONTENT_USAGE,
    CRAWL_DELAY,
    DIRECTIVES,
    HOST,
    REQUEST_RATE,
    SITEMAP,
    DirectiveNotSupported,
    RequestRate,
    RobotParser,
    ScrapyRobotParser,
    as_robot_parser,
    check_parser_class,
    default_user_agent,
)
from scrapy_robots.settings.defaults import SHORT_NAMES

_BACKENDS = {
    "ProtegoParser": "scrapy_robots.parsers.protego",
    "PythonParser": "scrapy_robots.parsers.python",
    "RerpParser": "scrapy_robots.parsers.rerp",
    "ReppyParser": "scrapy_robots.parsers.reppy",
    "RFC9309Parser": "scrapy_robots.parsers.rfc9309",
    "GoogleParser": "scrapy_robots.parsers.google",
}

__all__ = [
    "ALLOW",
    "CONTENT_USAGE",
    "CRAWL_DELAY",
    "DIRECTIVES",
    "HOST",
    "REQUEST_RATE",
    "SHORT_NAMES",
    "SITEMAP",
    "DirectiveNotSupported",
    "RequestRate",
    "RobotParser",
    "ScrapyRobotParser",
    "as_robot_parser",
    "check_parser_class",
    "default_user_agent",
    *_BACKENDS,
]


def __getattr__(name: str) -> Any:
    if name in _BACKENDS:
        return getattr(import_module(_BACKENDS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
