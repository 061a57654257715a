"""The site's delay, kept at the path the docs gave it: it lives in
:mod:`scrapy_robots.parsers.delay`, low enough for the cache's entry to name it."""

from __future__ import annotations

from scrapy_robots.parsers.delay import CLAMP, SKIP, SiteDelay, read_site_delay, site_delay

__all__ = ["CLAMP", "SKIP", "SiteDelay", "read_site_delay", "site_delay"]
