"""A robots.txt summarised as ``scrapy robots --summary`` shows it: the groups as RFC
9309 forms them, with the line of every record. Built on the parser's own
:class:`~scrapy_robots.rfc9309.GroupBuilder`, like the linter (``lint.py``).
"""

from __future__ import annotations

from typing import Any

from scrapy_robots.decoding import decode_robotstxt
from scrapy_robots.rfc9309 import GroupBuilder, parse_robotstxt


class _Summary(GroupBuilder):
    """The parser's own groups, with the line of every record and sitemap kept."""

    def __init__(self) -> None:
        super().__init__()
        self.records: dict[int, list[dict[str, Any]]] = {}
        self.sitemap_lines: list[dict[str, Any]] = []
        self.orphans: list[int] = []

    def _record(self, line: int, text: str) -> None:
        if self._group is None:
            self.orphans.append(line)
        else:
            self.records.setdefault(id(self._group), []).append({"line": line, "text": text})

    def handle_allow(self, line: int, value: str) -> None:
        if self._rules is None:
            self.orphans.append(line)
        super().handle_allow(line, value)

    def handle_disallow(self, line: int, value: str) -> None:
        if self._rules is None:
            self.orphans.append(line)
        super().handle_disallow(line, value)

    def handle_crawl_delay(self, line: int, value: str) -> None:
        self._record(line, f"Crawl-delay: {value}")
        super().handle_crawl_delay(line, value)

    def handle_request_rate(self, line: int, value: str) -> None:
        self._record(line, f"Request-rate: {value}")
        super().handle_request_rate(line, value)

    def handle_visit_time(self, line: int, value: str) -> None:
        self._record(line, f"Visit-time: {value}")
        super().handle_visit_time(line, value)

    def handle_sitemap(self, line: int, value: str) -> None:
        if value:
            self.sitemap_lines.append({"line": line, "url": value})
        super().handle_sitemap(line, value)


def summarize_robotstxt(body: bytes | str) -> dict[str, Any]:
    """The groups of ``body`` as the RFC 9309 parser builds them: each with its
    ``User-agent`` lines, its rules and its records, with line numbers; the sitemaps,
    the ``Host``, and the lines before any ``User-agent`` (they bind no crawler)."""
    summary = _Summary()
    parse_robotstxt(decode_robotstxt(body), summary)
    return {
        "groups": [
            {
                "line": group.agents[0][0],
                "user_agents": [{"line": line, "user_agent": value} for line, value, _ in group.agents],
                "rules": [{"line": line, "allow": allow, "pattern": pattern} for line, allow, pattern in group.rules],
                "records": summary.records.get(id(group), []),
            }
            for group in summary.groups
        ],
        "sitemaps": summary.sitemap_lines,
        "host": summary.host,
        "orphans": summary.orphans,
    }
