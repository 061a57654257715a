"""What a crawl's start-up says of the settings it was given, once per crawl, from the
middleware's construction: every setting is obeyed, or named.

- A ``ROBOTSTXT_*`` name the package does not know (the table, ``defaults.py``): a
  WARNING each, with the nearest known name. Said with ``ROBOTSTXT_OBEY = False`` too,
  whose misspelling is the costliest.
- A component a feature needs that the crawl does not list (its features on, enabled by
  hand without the add-on): one WARNING naming each and the line that adds it, from the
  one table of components (``components.py``) the add-on reads.
- A fleet setting (``ROBOTSTXT_REDIS_*``, ``ROBOTSTXT_FLEET_*``), or scrapy-redis' shared
  scheduler, while the storage is not the fleet's: one WARNING; each crawler would fetch
  robots.txt and pace each site alone, N crawlers at N times its Crawl-delay rate.
- Where robots.txt is kept and how each site is paced: one INFO line.

A run of ``scrapy robots`` (one-shot) is told the names only: it keeps nothing and
crawls no page, whatever the project's storage and components.
"""

from __future__ import annotations

import difflib
import logging
from typing import TYPE_CHECKING, Any

from scrapy.utils.misc import load_object

from scrapy_robots.settings.components import ADDON_LINE, PARTS, Part
from scrapy_robots.settings.defaults import DEFAULTS, FLEET_STORAGE, PRIVATE
from scrapy_robots.settings.readers import object_name

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

    from scrapy_robots.settings.config import RobotsConfig

logger = logging.getLogger(__name__)

#: The prefix the package owns; a name without it is not ours to judge.
PREFIX = "ROBOTSTXT_"
#: The settings that only the fleet's storage reads.
FLEET_SETTINGS = tuple(name for name in DEFAULTS if name.startswith(("ROBOTSTXT_REDIS_", "ROBOTSTXT_FLEET_")))
UNKNOWN = "%(name)s is not a scrapy-robots setting and is ignored%(guess)s"
#: How close a name must be to a known one to be offered as "did you mean" (difflib's ratio).
CLOSE = 0.75


def check_at_start(crawler: Crawler, config: RobotsConfig, storage: Any = None, shared_pace: bool = False) -> None:
    """Everything the crawl's start-up says of its settings (see the module). Without
    ``storage`` (the middleware is off: ``ROBOTSTXT_OBEY = False``), the names only."""
    settings = crawler.settings
    for name, nearest in unknown_settings(settings):
        guess = f": did you mean {nearest}?" if nearest else " (docs/settings.rst lists them)"
        logger.warning(UNKNOWN, {"name": name, "guess": guess})
    if storage is None or config.one_shot:
        return
    missing = missing_parts(settings, config)
    if missing:
        logger.warning(parts_warning(missing))
    where = storage_text(storage)
    hints = fleet_without_fleet(settings, storage)
    if hints:
        logger.warning(
            "%(hints)s: this crawler looks like one of a fleet, but it keeps robots.txt %(where)s and paces each "
            "site alone: N such crawlers each fetch robots.txt and each pace a site at its Crawl-delay, N times its "
            "rate together. Set ROBOTSTXT_CACHE_STORAGE = %(fleet)r to share both (docs/fleet.rst).",
            {"hints": "; ".join(hints), "where": where, "fleet": FLEET_STORAGE},
        )
    logger.info(
        "scrapy-robots keeps robots.txt %(where)s; each site is paced %(pace)s (ROBOTSTXT_CACHE_STORAGE = %(cls)s)",
        {
            "where": where,
            "pace": "across the fleet" if shared_pace else "by this crawler alone",
            "cls": object_name(type(storage)),
        },
    )


def unknown_settings(settings: BaseSettings) -> list[tuple[str, str | None]]:
    """Each ``ROBOTSTXT_*`` name of ``settings`` the package does not know, with the
    nearest known name (None when none is close)."""
    found = []
    for name in settings:
        if not isinstance(name, str) or name in DEFAULTS or name in PRIVATE:
            continue
        if name.upper().startswith(PREFIX):
            found.append((name, nearest_setting(name)))
    return sorted(found)


def nearest_setting(name: str) -> str | None:
    """The known setting ``name`` was most likely meant to be."""
    upper = name.upper()
    if upper in DEFAULTS:  # Scrapy's settings are case-sensitive: robotstxt_obey is not ROBOTSTXT_OBEY
        return upper
    close = difflib.get_close_matches(upper, DEFAULTS, n=1, cutoff=CLOSE)
    return close[0] if close else None


def missing_parts(settings: BaseSettings, config: RobotsConfig) -> list[Part]:
    """The components whose feature is on in ``config`` but which ``settings`` do not enable."""
    return [part for part in PARTS if part.needed(config) and not enabled(settings, part)]


def enabled(settings: BaseSettings, part: Part) -> bool:
    """Whether ``part`` (or a subclass of it) is listed, and not disabled, under its setting."""
    wanted = load_object(part.path)
    for key, order in settings.getwithbase(part.setting).items():
        if order is None:
            continue
        try:
            listed = load_object(key)
        except Exception:  # Scrapy names a component it cannot load, as it builds the list
            continue
        if isinstance(listed, type) and issubclass(listed, wanted):
            return True
    return False


def parts_warning(missing: list[Part]) -> str:
    """One line: what the crawl does not do, and the settings that add what it lacks."""
    lost = "; ".join(f"{part.lost} ({part.feature} is on; off: {part.off})" for part in missing)
    lines = []
    for setting in dict.fromkeys(part.setting for part in missing):
        listed = ", ".join(part.line() for part in missing if part.setting == setting)
        lines.append(f"{setting} = {{{listed}, ...}}")
    return (
        f"scrapy-robots is enabled without the components its features need: {lost}. "
        f"Add {' and '.join(lines)}, or enable scrapy-robots with {ADDON_LINE}, which lists them all."
    )


def fleet_without_fleet(settings: BaseSettings, storage: Any) -> list[str]:
    """What says this crawler is one of a fleet (a fleet setting, scrapy-redis'
    scheduler), unless its storage is the fleet's."""
    if _is_fleet(storage):
        return []
    hints = [f"{name} is set" for name in FLEET_SETTINGS if settings.get(name) is not None]
    scheduler = settings.get("SCHEDULER")
    scheduler_name = scheduler if isinstance(scheduler, str) else object_name(scheduler)
    if scheduler_name.startswith("scrapy_redis."):
        hints.append(f"SCHEDULER is scrapy-redis' queue, shared by the crawlers ({scheduler_name})")
    return hints


def _is_fleet(storage: Any) -> bool:
    try:
        fleet = load_object(FLEET_STORAGE)
    except ImportError:  # redis-py missing: then no storage is the fleet's
        return False
    return isinstance(storage, fleet)


def storage_text(storage: Any) -> str:
    """Where ``storage`` keeps robots.txt, as it says; a storage of one's own without
    ``describe`` is named by its class."""
    describe = getattr(storage, "describe", None)
    if callable(describe):
        return str(describe())
    return f"in {object_name(type(storage))}"
