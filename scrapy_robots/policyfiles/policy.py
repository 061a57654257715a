"""The status policy's table, kept at the path the docs gave it: it lives in
:mod:`scrapy_robots.status.policy`, low enough for the cache and the settings to import."""

from __future__ import annotations

from scrapy_robots.status.policy import NETWORK, PRESETS, Action, StatusPolicy

__all__ = ["NETWORK", "PRESETS", "Action", "StatusPolicy"]
