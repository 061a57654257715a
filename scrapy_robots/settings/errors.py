"""A setting the crawl cannot start with: one ERROR line that names it, and no traceback.

Scrapy builds the middlewares inside the crawl's task: what one of them raises stops the
crawl (``scrapy crawl`` exits with 1), but asyncio prints it with the ~35 frames of
Scrapy's start-up above the one line that says what to fix. A :class:`SettingError` is
an error of the user's settings, whose message is the whole story: :func:`starting`
logs it once, as the component's ERROR line, and keeps asyncio's "Task exception was
never retrieved" report of that same exception out of the log. Any other exception keeps
its traceback.

The crawl's settings are read once, by whichever of the package's components Scrapy
builds first (an extension before the middlewares): their errors are the package's,
named :data:`PACKAGE` (``RobotsConfig.of``), not that component's; a component names
itself for what it checks alone (a storage class, a record folder).
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

logger = logging.getLogger(__name__)


#: How the ERROR line names the package, for an error of the crawl's settings.
PACKAGE = "scrapy-robots"


class SettingError(ValueError):
    """A bad setting; the message names it and says what to give instead."""

    #: said already, by the innermost :func:`starting` (the settings' own, inside a component's)
    said = False


class _SaidAlready(logging.Filter):
    """asyncio's report of an exception logged already: dropped, once."""

    def __init__(self, error: SettingError):
        super().__init__()
        self.error = error

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is self.error:
            logging.getLogger("asyncio").removeFilter(self)
            return False
        return True


@contextmanager
def starting(component: str) -> Iterator[None]:
    """Around the construction of ``component`` (a middleware's from_crawler, or
    :data:`PACKAGE` around the settings' reading)."""
    try:
        yield
    except SettingError as error:
        if error.said:
            raise
        error.said = True
        logger.error("%(component)s cannot start: %(error)s", {"component": component, "error": error})
        reports = logging.getLogger("asyncio")
        # One at most: a crawl that fails outside an asyncio task (Scrapy 2.13, a test)
        # leaves its filter unused; the next failure replaces it.
        for stale in [f for f in reports.filters if isinstance(f, _SaidAlready)]:
            reports.removeFilter(stale)
        reports.addFilter(_SaidAlready(error))
        raise
