"""scrapy-robots: a polite, correct robots.txt middleware for Scrapy.

Public names load lazily, so ``import scrapy_robots.rfc9309`` does not import Scrapy.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_LAZY: dict[str, str] = {
    "RobotsTxtMiddleware": "scrapy_robots.middleware",
    "Addon": "scrapy_robots.addon",
    "UsageMiddleware": "scrapy_robots.spidermw",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
