"""A pytest plugin that runs Scrapy's own robots.txt middleware tests on ours.

Loaded with ``-p scrapy_suite_plugin`` so that it acts before the test module
imports ``scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware``. The
``SCRAPY_ROBOTS_SUITE`` environment variable says what runs:

- ``stock``: Scrapy's middleware, untouched (the anchor);
- a ``ROBOTSTXT_STATUS_POLICY`` preset (``scrapy``, ``default``, ``rfc9309``): our
  middleware in place of Scrapy's, with that preset as the default setting (the
  tests build their crawlers from ``Settings()``, so the default is what they see);
  the retry delay of an unreachable robots.txt is shortened, nothing else changes.

Each test's outcome is written as JSON to ``SCRAPY_ROBOTS_SUITE_REPORT``.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

MODE = os.environ.get("SCRAPY_ROBOTS_SUITE", "stock")
#: "Class::test" -> {"outcome": passed / failed / skipped, "text": the failure's report}
_outcomes: dict[str, dict[str, str]] = {}


class _ForwardToStockLogger:
    """Our middleware's logger, forwarding to the stock module's ``logger`` as it is
    at call time: a test that patches ``scrapy.downloadermiddlewares.robotstxt.logger``
    then sees what our middleware logs."""

    def __getattr__(self, name: str) -> Any:
        import scrapy.downloadermiddlewares.robotstxt as stock

        return getattr(stock.logger, name)


def pytest_configure(config: pytest.Config) -> None:
    # Scrapy's own conftest.py registers this marker (and imports its mock servers).
    config.addinivalue_line("markers", "only_asyncio: the test needs the asyncio reactor")
    if MODE == "stock":
        return
    import scrapy.downloadermiddlewares.robotstxt as stock
    from scrapy.settings import default_settings

    from scrapy_robots import middleware as ours
    from scrapy_robots import verdict
    from scrapy_robots.policyfiles import book as sites
    from scrapy_robots.policyfiles import reader

    default_settings.ROBOTSTXT_STATUS_POLICY = MODE  # type: ignore[attr-defined]
    # Where a network error means "unreachable", the site's requests wait for its
    # retries (30 s, 60 s, 120 s by default): the same attempts, a thousandth of the time.
    default_settings.ROBOTSTXT_UNREACHABLE_RETRY_DELAY = 0.03  # type: ignore[attr-defined]
    stock.RobotsTxtMiddleware = ours.RobotsTxtMiddleware  # type: ignore[misc]
    # Scrapy's tests patch its middleware's logger: ours logs from these modules.
    for module in (ours, sites, reader, verdict):
        module.logger = _ForwardToStockLogger()  # type: ignore[assignment]


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # One outcome per test: its call's, unless a phase failed or skipped it.
    key = report.nodeid.rpartition(".py::")[2]
    if (report.when == "call" or not report.passed) and _outcomes.get(key, {}).get("outcome") != "failed":
        outcome = "skipped" if report.skipped else report.outcome
        _outcomes[key] = {"outcome": outcome, "text": str(report.longrepr) if report.failed else ""}


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = os.environ.get("SCRAPY_ROBOTS_SUITE_REPORT")
    if path:
        with open(path, "w", encoding="utf-8") as out:
            json.dump(_outcomes, out, indent=1, sort_keys=True)
