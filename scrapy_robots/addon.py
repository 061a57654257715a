"""The one-line add-on: ``ADDONS = {"scrapy_robots.Addon": 0}``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.settings import SETTINGS_PRIORITIES

from scrapy_robots.settings.components import BACKOFF, DIRECTIVES, OURS, PARTS, STOCK, USAGE

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["BACKOFF", "DIRECTIVES", "OURS", "STOCK", "USAGE", "Addon"]


class Addon:
    """Swaps Scrapy's robots.txt middleware for ours, at the stock one's priority, and
    lists the components beside it (settings/components.py, the one table)."""

    def update_settings(self, settings: BaseSettings) -> None:
        # DOWNLOADER_MIDDLEWARES is a settings object of its own: changing it in place
        # keeps what the project put there, whatever the priority it was set with.
        middlewares = settings["DOWNLOADER_MIDDLEWARES"]
        order = settings.getdict("DOWNLOADER_MIDDLEWARES_BASE").get(STOCK, 100)
        # Scrapy's middleware may be listed again with a higher priority than a project's
        # (a spider's custom_settings, -s): disabled at that priority, or it runs beside ours.
        middlewares.set(STOCK, None, priority=max(middlewares.getpriority(STOCK) or 0, SETTINGS_PRIORITIES["project"]))
        middlewares[OURS] = order
        # Each is NotConfigured while its feature is off. One the project lists already
        # (None included: disabled on purpose) keeps its order; the start-up check names
        # one that is disabled while its feature is on.
        for part in PARTS:
            listed = settings[part.setting]
            if part.path not in listed:
                listed[part.path] = part.order
