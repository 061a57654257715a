"""A robots.txt summarised as ``scrapy robots --summary`` shows it: the groups as RFC
9309 forms them, with the line of every record. Built on the parser's own
:class:`~scrapy_robots.rfc9309.GroupBuilder`, like the linter (``lint/__init__.py``).
"""

from __future__ import annotations

from typing import Any

from scrapy_robots.decoding import cut_at_maxsize, decode_robotstxt
from scrapy_robots.rfc9309 import GroupBuilder, parse_robotstxt


class _Summary(GroupBuilder):
    """The parser's own groups, with the line of every record and sitemap kept."""

    def __init__(self) -> None:
        super().__init__()
        self.records: dict[int, list[dict[str, Any]]] = {}
        self.sitemap_lines: list[dict[str, Any]] = []
        self.orphans: list[int] = []
        #: lines before any User-agent that apply to every crawler (Content-Signal, as the
        #: crawl reads it: usage/; License, RSL 1.0's global license)
        self.file_wide: list[dict[str, Any]] = []

    def _record(self, line: int, text: str, file_wide: bool = False) -> None:
        if self._group is None and file_wide:
            self.file_wide.append({"line": line, "text": text})
        elif self._group is None:
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

    def handle_content_signal(self, line: int, value: str) -> None:
        self._record(line, f"Content-Signal: {value}", file_wide=True)
        super().handle_content_signal(line, value)

    def handle_license(self, line: int, value: str) -> None:
        self._record(line, f"License: {value}", file_wide=True)
        super().handle_license(line, value)

    def handle_content_usage(self, line: int, value: str) -> None:
        self._record(line, f"Content-Usage: {value}")
        super().handle_content_usage(line, value)

    def handle_sitemap(self, line: int, value: str) -> None:
        if value:
            self.sitemap_lines.append({"line": line, "url": value})
        super().handle_sitemap(line, value)


def summarize_robotstxt(body: bytes | str, maxsize: int | None = None, truncated: bool = False) -> dict[str, Any]:
    """The groups of ``body`` as the RFC 9309 parser builds them: each with its
    ``User-agent`` lines, its rules and its records, with line numbers; the sitemaps,
    the ``Host``, and the lines before any ``User-agent`` (they bind no crawler).

    ``maxsize`` is ``ROBOTSTXT_MAXSIZE``: the lines of a longer body that the crawl
    does not read (past its cut, :func:`~scrapy_robots.decoding.cut_at_maxsize`) are
    kept, marked ``"read": False``, and ``not_read`` says which they are.
    ``truncated``: ``body`` is already the part read of a longer file (a download
    stopped at the cap), whose other lines are not known."""
    read = cut_at_maxsize(body, maxsize) if maxsize is not None and isinstance(body, bytes) else body
    text = decode_robotstxt(body)
    not_read = None
    if len(read) < len(body) or truncated:
        first = decode_robotstxt(read).count("\n") + 1
        last = text.count("\n") + (0 if text.endswith("\n") else 1)
        not_read = {
            "maxsize": maxsize,
            "bytes_read": len(read),
            "from_line": first,
            "to_line": None if truncated else last,
        }

    def is_read(line: int) -> bool:
        return not_read is None or line < not_read["from_line"]

    summary = _Summary()
    parse_robotstxt(text, summary)
    return {
        "groups": [
            {
                "line": group.agents[0][0],
                "read": is_read(group.agents[0][0]),
                "user_agents": [{"line": line, "user_agent": value} for line, value, _ in group.agents],
                "rules": [
                    {"line": line, "allow": allow, "pattern": pattern, "read": is_read(line)}
                    for line, allow, pattern in group.rules
                ],
                "records": [
                    {**record, "read": is_read(record["line"])} for record in summary.records.get(id(group), [])
                ],
            }
            for group in summary.groups
        ],
        "sitemaps": [{**sitemap, "read": is_read(sitemap["line"])} for sitemap in summary.sitemap_lines],
        "host": summary.host,
        "orphans": summary.orphans,
        "file_wide": [{**item, "read": is_read(item["line"])} for item in summary.file_wide],
        "not_read": not_read,
    }
