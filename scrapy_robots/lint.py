"""robots.txt lint: the lines that no parser rule uses, and why.

Pure Python, no Scrapy import. The linter is one more consumer of the tokenizer's
line events (:func:`scrapy_robots.rfc9309.parse_robotstxt`): it groups lines exactly
as the RFC 9309 parser does, by extending its group builder, and never re-parses::

    from scrapy_robots.lint import lint_robotstxt

    for finding in lint_robotstxt(open("robots.txt", "rb").read()):
        print(finding)   # line 4: unknown directive 'Disallwo' (did you mean Disallow?) ...
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Final

# The linter must see groups exactly as the parser builds them (a Sitemap line does
# not close a run of User-agent lines, rules before any User-agent belong to nobody):
# it extends the parser's own builder rather than restate those rules.
from scrapy_robots._sfv import parse_sf_dictionary
from scrapy_robots.decoding import decode_robotstxt, starts_as_html
from scrapy_robots.lint_bytes import is_binary, not_utf8_lines, utf8_expected
from scrapy_robots.rfc9309 import (
    GroupBuilder,
    normalize,
    parse_clean_param,
    parse_crawl_delay,
    parse_request_rate,
    parse_robotstxt,
    parse_visit_time,
)
from scrapy_robots.usage import (
    SIGNALS,
    USAGE_LABELS,
    parse_content_signal,
    parse_content_usage,
    split_usage_rule,
)

#: RFC 9309 2.5: crawlers must parse at least 500 KiB; many stop right there.
SIZE_LIMIT: Final = 500 * 1024

# Finding codes, stable for scripts (``--json``).
UNKNOWN_DIRECTIVE: Final = "unknown-directive"
INVALID_LINE: Final = "invalid-line"
RULE_BEFORE_USER_AGENT: Final = "rule-before-user-agent"
RECORD_BEFORE_USER_AGENT: Final = "record-before-user-agent"
BAD_VALUE: Final = "bad-value"
DUPLICATE: Final = "duplicate"
OVERRIDDEN: Final = "overridden-disallow"
NO_LEADING_SLASH: Final = "no-leading-slash"
EMPTY_USER_AGENT: Final = "empty-user-agent"
RELATIVE_SITEMAP: Final = "relative-sitemap"
TOO_LARGE: Final = "too-large"
HTML: Final = "html"
BINARY: Final = "binary"
MISSPELT: Final = "misspelt-directive"
NOT_UTF8: Final = "not-utf8"
BAD_PREFERENCE: Final = "bad-preference"
UNKNOWN_PREFERENCE: Final = "unknown-preference"

# What "did you mean" compares an unknown key with, as people write them.
_DIRECTIVE_SPELLINGS: Final = {
    "user-agent": "User-agent",
    "allow": "Allow",
    "disallow": "Disallow",
    "sitemap": "Sitemap",
    "crawl-delay": "Crawl-delay",
    "request-rate": "Request-rate",
    "visit-time": "Visit-time",
    "host": "Host",
    "clean-param": "Clean-param",
    "content-signal": "Content-Signal",
    "content-usage": "Content-Usage",
}
_GOOGLE_READS: Final = frozenset({"User-agent", "Allow", "Disallow", "Sitemap"})
# A comment cut and whitespace stripped as the tokenizer does.
_WS: Final = " \t\v\f"


@dataclass(frozen=True, order=True)
class Finding:
    """One line that no parser rule uses (``line`` 0: the whole file)."""

    line: int
    code: str
    message: str

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line else "file"
        return f"{where}: {self.message}"


class RobotsTxtLinter(GroupBuilder):
    """A :class:`~scrapy_robots.rfc9309.RobotsTxtHandler` that records
    :class:`Finding` objects while the parser's groups are built.

    Given the ``text`` it lints, it also reports the misspelt keys that the tokenizer
    accepts (``Disalow``): the tokenizer's events carry the directive, not the key as
    written, so the linter reads the key back from the line."""

    def __init__(self, text: str | None = None) -> None:
        super().__init__()
        self.findings: list[Finding] = []
        #: Lines read as a directive (so not an HTML page that happens to say "<html").
        self.directives = 0
        self._lines = _lines(text) if text is not None else None

    def _add(self, line: int, code: str, message: str) -> None:
        self.findings.append(Finding(line, code, message))

    def _spelling(self, line: int, directive: str) -> None:
        self.directives += 1
        if self._lines is None or line > len(self._lines):
            return
        key = _key_of(self._lines[line - 1])
        if key.lower() != directive.lower():
            readers = "Google's parser and ours" if directive in _GOOGLE_READS else "our parser"
            self._add(
                line,
                MISSPELT,
                f"{key!r} is read as {directive} by {readers}, but not by every parser "
                f"(urllib.robotparser skips the line): write {directive}",
            )

    def handle_user_agent(self, line: int, value: str) -> None:
        self._spelling(line, "User-agent")
        if not value:
            self._add(line, EMPTY_USER_AGENT, "User-agent with no value names no crawler")
        super().handle_user_agent(line, value)

    def handle_allow(self, line: int, value: str) -> None:
        self._spelling(line, "Allow")
        self._check_rule(line, "Allow", value)
        super().handle_allow(line, value)

    def handle_disallow(self, line: int, value: str) -> None:
        self._spelling(line, "Disallow")
        self._check_rule(line, "Disallow", value)
        super().handle_disallow(line, value)

    def _check_rule(self, line: int, directive: str, value: str) -> None:
        if self._rules is None:
            self._add(
                line,
                RULE_BEFORE_USER_AGENT,
                f"{directive}: {value} comes before any User-agent line: it applies to no crawler",
            )
        elif value and value[0] not in "/*":
            self._add(
                line,
                NO_LEADING_SLASH,
                f"{directive}: {value} does not start with '/' or '*': it matches no URL "
                f"(did you mean {directive}: /{value}?)",
            )

    def handle_sitemap(self, line: int, value: str) -> None:
        self._spelling(line, "Sitemap")
        if not value.lower().startswith(("http://", "https://")):
            self._add(line, RELATIVE_SITEMAP, f"Sitemap: {value} is not an absolute http(s) URL")
        super().handle_sitemap(line, value)

    def handle_crawl_delay(self, line: int, value: str) -> None:
        self._spelling(line, "Crawl-delay")
        if self._group_record(line, "Crawl-delay", value, self._group and self._group.crawl_delay):
            if parse_crawl_delay(value) is None:
                self._add(line, BAD_VALUE, f"Crawl-delay: {value} is not a number of seconds")
        super().handle_crawl_delay(line, value)

    def handle_request_rate(self, line: int, value: str) -> None:
        self._spelling(line, "Request-rate")
        if self._group_record(line, "Request-rate", value, self._group and self._group.request_rate):
            if parse_request_rate(value) is None:
                self._add(line, BAD_VALUE, f"Request-rate: {value} is not requests/seconds (such as 1/10s)")
        super().handle_request_rate(line, value)

    def handle_visit_time(self, line: int, value: str) -> None:
        self._spelling(line, "Visit-time")
        if self._group_record(line, "Visit-time", value, self._group and self._group.visit_time):
            if parse_visit_time(value) is None:
                self._add(line, BAD_VALUE, f"Visit-time: {value} is not a time range (such as 0100-0545)")
        super().handle_visit_time(line, value)

    def handle_host(self, line: int, value: str) -> None:
        self._spelling(line, "Host")
        super().handle_host(line, value)

    def handle_clean_param(self, line: int, value: str) -> None:
        self._spelling(line, "Clean-param")
        if parse_clean_param(value) is None:
            self._add(line, BAD_VALUE, f"Clean-param: {value} names no parameter")
        super().handle_clean_param(line, value)

    def handle_content_signal(self, line: int, value: str) -> None:
        self._spelling(line, "Content-Signal")
        if self._group_record(line, "Content-Signal", value, None):
            parsed = parse_content_signal(value)
            if parsed is None:
                self._add(
                    line, BAD_PREFERENCE, f"Content-Signal: {value} is not 'name=yes|no, ...': the line is ignored"
                )
            else:
                self._check_names(line, "Content-Signal", parse_sf_dictionary(value.lower()) or {}, SIGNALS, "yes/no")
        super().handle_content_signal(line, value)

    def handle_content_usage(self, line: int, value: str) -> None:
        self._spelling(line, "Content-Usage")
        if self._group_record(line, "Content-Usage", value, None):
            scope, prefs = split_usage_rule(value)
            if parse_content_usage(prefs) is None:
                self._add(
                    line,
                    BAD_PREFERENCE,
                    f"Content-Usage: {value} is not '[/path] label=y|n, ...' (an RFC 9651 dictionary): "
                    "the line is ignored",
                )
            else:
                self._check_names(line, "Content-Usage", parse_sf_dictionary(prefs) or {}, USAGE_LABELS, "y/n")
        super().handle_content_usage(line, value)

    def _check_names(
        self, line: int, directive: str, parsed: dict[str, object], known: frozenset[str], values: str
    ) -> None:
        for name, value in parsed.items():
            if name not in known:
                close = difflib.get_close_matches(name.replace("_", "-"), sorted(known), n=1, cutoff=0.6)
                hint = f" (did you mean {close[0]}?)" if close else ""
                self._add(line, UNKNOWN_PREFERENCE, f"{directive}: unknown name {name!r}{hint}: it is ignored")
            elif str(value) not in values.split("/"):
                self._add(line, BAD_PREFERENCE, f"{directive}: {name}={value} is not {values}: it is ignored")

    def _group_record(self, line: int, directive: str, value: str, earlier: object) -> bool:
        """Whether a group record is read at all; says why not."""
        if self._group is None:
            self._add(
                line,
                RECORD_BEFORE_USER_AGENT,
                f"{directive}: {value} comes before any User-agent line: it applies to no crawler",
            )
            return False
        if earlier is not None:
            self._add(line, DUPLICATE, f"a second {directive} in the same group: only the first one counts")
            return False
        return True

    def handle_unknown(self, line: int, key: str, value: str) -> None:
        close = difflib.get_close_matches(key.lower(), _DIRECTIVE_SPELLINGS, n=1, cutoff=0.7)
        hint = f" (did you mean {_DIRECTIVE_SPELLINGS[close[0]]}?)" if close else ""
        self._add(line, UNKNOWN_DIRECTIVE, f"unknown directive {key!r}{hint}: no parser reads this line")

    def handle_invalid(self, line: int, text: str) -> None:
        self._add(line, INVALID_LINE, f"{_shorten(text)!r} is not a 'key: value' line")

    def handle_end(self) -> None:
        super().handle_end()
        self._overridden_disallows()

    def _overridden_disallows(self) -> None:
        # Groups naming the same agent merge (RFC 9309 2.2.1); the longest pattern
        # wins and Allow wins ties, so a Disallow whose pattern an Allow repeats (or
        # extends with '*', which matches the same paths) never decides anything.
        merged: dict[str, list[tuple[int, bool, str]]] = {}
        for group in self.groups:
            for _, _, key in group.agents:
                merged.setdefault(key, []).extend(group.rules)
        reported: set[int] = set()
        for rules in merged.values():
            allows: dict[str, tuple[int, str]] = {}
            for line, allow, pattern in rules:
                if allow and pattern:
                    normal = normalize(pattern)
                    stem = normal.rstrip("*")
                    if len(normal) >= len(allows.get(stem, (0, ""))[1]):
                        allows[stem] = (line, normal)
            for line, allow, pattern in rules:
                if allow or not pattern or line in reported:
                    continue
                normal = normalize(pattern)
                winner = allows.get(normal.rstrip("*"))
                if winner is not None and len(winner[1]) >= len(normal):
                    reported.add(line)
                    self._add(
                        line,
                        OVERRIDDEN,
                        f"Disallow: {pattern} never applies: the Allow on line {winner[0]} matches the same "
                        "paths and wins (longest match, Allow wins ties; first-match parsers such as "
                        "urllib read it otherwise)",
                    )


def lint_robotstxt(
    body: bytes | str, *, encoding: str | None = None, limit: int = SIZE_LIMIT, truncated: bool = False
) -> list[Finding]:
    """The findings for ``body``, in line order.

    ``encoding`` is the response's charset, if known; ``limit`` the size beyond which
    parsers may stop reading; ``truncated`` says the body is only the start of a larger
    file (the crawl stopped reading at ``ROBOTSTXT_MAXSIZE``).
    """
    text = decode_robotstxt(body, encoding)
    size = len(body) if isinstance(body, bytes) else len(text.encode("utf-8"))
    if is_binary(body, encoding):
        return [Finding(0, BINARY, "this is binary data, not a robots.txt: parsers read no rule from it")]
    linter = RobotsTxtLinter(text)
    parse_robotstxt(text, linter)
    html = _html_page(text, linter.directives)
    if html is not None:
        # Every line of an HTML page would be a finding: say it once.
        return [html]
    findings = linter.findings
    if isinstance(body, bytes) and utf8_expected(encoding):
        findings.extend(Finding(line, NOT_UTF8, message) for line, message in not_utf8_lines(body))
    lines = text.split("\n")
    if size > limit:
        findings.append(
            Finding(
                _line_at_byte(lines, limit),
                TOO_LARGE,
                f"the file is {size:,} bytes: parsers may stop reading at {limit // 1024} KiB "
                "(RFC 9309 2.5), so this line and those after it may be ignored",
            )
        )
    if truncated:
        findings.append(
            Finding(
                len(lines),
                TOO_LARGE,
                f"the file goes on beyond the {size:,} bytes read (ROBOTSTXT_MAXSIZE): the rest is ignored",
            )
        )
    return sorted(findings)


def looks_binary(body: bytes | str) -> bool:
    """Whether ``body`` is not text at all (an image, an archive...)."""
    return is_binary(body)


def _html_page(text: str, directives: int) -> Finding | None:
    """An HTML page: one that starts as one, or that has the markers and no line a
    parser reads. A robots.txt that mentions ``<html`` somewhere (in a comment, a
    path) is linted line by line like any other."""
    head = text[:2048].lstrip().lower()
    if starts_as_html(head) or (not directives and ("<html" in head or "<!doctype html" in head)):
        line = next((n for n, part in enumerate(text.split("\n"), 1) if "<" in part), 1)
        return Finding(
            line,
            HTML,
            "this is an HTML page, not a robots.txt (a server answering every URL with a page?): "
            "parsers read no rule from it",
        )
    return None


def _lines(text: str) -> list[str]:
    # The tokenizer's line ends; decode_robotstxt made them "\n" and removed the BOM.
    return text.split("\n")


def _key_of(line: str) -> str:
    """A line's key as written (the tokenizer's split: ``key: value``, else the first
    of two words)."""
    if "#" in line:
        line = line[: line.index("#")]
    key, colon, _ = line.partition(":")
    if colon:
        return key.strip(_WS)
    return line.strip(_WS).split(None, 1)[0] if line.strip(_WS) else ""


def _line_at_byte(lines: list[str], offset: int) -> int:
    end = 0
    for number, line in enumerate(lines, 1):
        end += len(line.encode("utf-8")) + 1
        if end > offset:
            return number
    return len(lines)


def _shorten(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."
