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

__all__ = [
    "Finding",
    "RobotsTxtLinter",
    "lint_robotstxt",
    "looks_binary",
    "BAD_PREFERENCE",
    "BAD_VALUE",
    "BINARY",
    "DUPLICATE",
    "EMPTY_USER_AGENT",
    "FILE_WIDE_SIGNAL",
    "HTML",
    "INVALID_LINE",
    "LEGACY_CHARSET",
    "LEGACY_LABEL",
    "MISSING_COLON",
    "MISSPELT",
    "NO_LEADING_SLASH",
    "NOT_UTF8",
    "OVERRIDDEN",
    "RECORD_BEFORE_USER_AGENT",
    "RELATIVE_LICENSE",
    "RELATIVE_SITEMAP",
    "RULE_BEFORE_USER_AGENT",
    "SEVERAL_LICENSES",
    "SIZE_LIMIT",
    "TOO_LARGE",
    "UNKNOWN_DIRECTIVE",
    "UNKNOWN_PREFERENCE",
]

from scrapy_robots.decoding import decode_robotstxt, starts_as_html
from scrapy_robots.lint.codes import (
    BAD_PREFERENCE,
    BAD_VALUE,
    BINARY,
    DUPLICATE,
    EMPTY_USER_AGENT,
    FILE_WIDE_SIGNAL,
    HTML,
    INVALID_LINE,
    LEGACY_CHARSET,
    LEGACY_LABEL,
    MISSING_COLON,
    MISSPELT,
    NO_LEADING_SLASH,
    NOT_UTF8,
    OVERRIDDEN,
    RECORD_BEFORE_USER_AGENT,
    RELATIVE_LICENSE,
    RELATIVE_SITEMAP,
    RULE_BEFORE_USER_AGENT,
    SEVERAL_LICENSES,
    SIZE_LIMIT,
    TOO_LARGE,
    UNKNOWN_DIRECTIVE,
    UNKNOWN_PREFERENCE,
)
from scrapy_robots.lint.encoding import is_binary, legacy_charset_rules, not_utf8_lines, utf8_expected
from scrapy_robots.lint.preferences import PreferenceLines
from scrapy_robots.rfc9309 import (
    GroupBuilder,
    directive_of,
    normalize,
    parse_clean_param,
    parse_crawl_delay,
    parse_request_rate,
    parse_robotstxt,
    parse_visit_time,
)

# The linter must see groups exactly as the parser builds them (a Sitemap line does
# not close a run of User-agent lines, rules before any User-agent belong to nobody):
# it extends the parser's own builder rather than restate those rules.

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
    "license": "License",
}
_GOOGLE_READS: Final = frozenset({"User-agent", "Allow", "Disallow", "Sitemap"})
# A directive with no colon ("Disallow /x"), as the backends read it (checked against
# them in tests/test_lint.py): Google's parser and ours take a line of exactly two
# words, cut at a colon in the value if there is one; Protego joins the words after its
# own key spellings, whatever their number, unless a colon followed by a blank cuts the
# line; urllib.robotparser and rerp need "key:". Each knows these directives:
_PROTEGO_KEYS: Final = frozenset(
    "user-agent useragent allow disallow dissallow dissalow disalow diasllow disallaw sitemap sitemaps "
    "site-map crawl-delay request-rate visit-time host".split()
)
_KNOWN_TO: Final = {
    "Google's parser": _GOOGLE_READS,
    "Protego": _GOOGLE_READS | {"Crawl-delay", "Request-rate", "Visit-time", "Host"},
    "urllib.robotparser": _GOOGLE_READS | {"Crawl-delay", "Request-rate"},
    "rerp": _GOOGLE_READS | {"Crawl-delay"},
}
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


class RobotsTxtLinter(PreferenceLines, GroupBuilder):
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
        #: Lines with no colon after the key whose value has one: read as another value.
        self._garbled: set[int] = set()
        #: ``{line: (directive, value)}`` of the Allow and Disallow lines.
        self.rule_lines: dict[int, tuple[str, str]] = {}
        #: The first ``License`` line of each scope (RSL 1.0 4.4: global, or a group's).
        self._first_license: dict[int | None, int] = {}

    def _add(self, line: int, code: str, message: str) -> None:
        self.findings.append(Finding(line, code, message))

    def _spelling(self, line: int, directive: str) -> None:
        self.directives += 1
        if self._lines is None or line > len(self._lines):
            return
        text = self._lines[line - 1]
        bare = _without_colon(text)
        if bare is not None:
            self._missing_colon(line, *bare)
        key = bare[0] if bare is not None else _key_of(text)
        if key.lower() != directive.lower():
            readers = "Google's parser and ours" if directive in _GOOGLE_READS else "our parser"
            self._add(
                line,
                MISSPELT,
                f"{key!r} is read as {directive} by {readers}, but not by every parser "
                f"(urllib.robotparser skips the line): write {directive}",
            )

    def _missing_colon(self, line: int, word: str, rest: str) -> bool:
        """Reports a directive written with no colon, if some parser reads it."""
        message = _colon_message(word, rest)
        if message is None:
            return False
        if ":" in rest:
            self._garbled.add(line)  # the parsers that read it read another value
        self._add(line, MISSING_COLON, message)
        return True

    def _bare(self, line: int) -> tuple[str, str] | None:
        if self._lines is None or line > len(self._lines):
            return None
        return _without_colon(self._lines[line - 1])

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
        self.rule_lines[line] = (directive, value)
        if self._rules is None:
            self._add(
                line,
                RULE_BEFORE_USER_AGENT,
                f"{directive}: {value} comes before any User-agent line: it applies to no crawler",
            )
        elif value and value[0] not in "/*" and line not in self._garbled:
            self._add(
                line,
                NO_LEADING_SLASH,
                f"{directive}: {value} does not start with '/' or '*': it matches no URL "
                f"(did you mean {directive}: /{value}?)",
            )

    def handle_sitemap(self, line: int, value: str) -> None:
        self._spelling(line, "Sitemap")
        if not value.lower().startswith(("http://", "https://")) and line not in self._garbled:
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
        bare = self._bare(line)  # "Host example.com:8080": the key is "Host example.com"
        if bare is not None and self._missing_colon(line, *bare):
            return
        close = difflib.get_close_matches(key.lower(), _DIRECTIVE_SPELLINGS, n=1, cutoff=0.7)
        hint = f" (did you mean {_DIRECTIVE_SPELLINGS[close[0]]}?)" if close else ""
        self._add(line, UNKNOWN_DIRECTIVE, f"unknown directive {key!r}{hint}: no parser reads this line")

    def handle_invalid(self, line: int, text: str) -> None:
        bare = self._bare(line)  # "Disallow /a b": three words
        if bare is not None and self._missing_colon(line, *bare):
            return
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
    elif isinstance(body, bytes) and encoding:
        legacy = legacy_charset_rules(body, encoding, linter.rule_lines)
        findings.extend(Finding(line, LEGACY_CHARSET, message) for line, message in legacy)
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


def _without_colon(line: str) -> tuple[str, str] | None:
    """``(key, value)`` of a line whose first word names a directive and is followed by
    a value, not by a colon (``Disallow /x``), else ``None``."""
    if "#" in line:
        line = line[: line.index("#")]
    line = line.strip(_WS)
    cut = min((line.find(blank) for blank in " \t" if blank in line), default=-1)
    if cut <= 0:
        return None
    word, rest = line[:cut], line[cut:].strip(_WS)
    if ":" in word or not rest or rest[0] == ":" or directive_of(word) is None:
        return None
    return word, rest


def _colon_message(word: str, rest: str) -> str | None:
    """What each parser reads of ``word rest`` (no colon after the key), or ``None`` if
    no parser reads the line."""
    directive = _DIRECTIVE_SPELLINGS[directive_of(word) or ""]
    before, colon, after = rest.partition(":")
    readings: dict[str, list[str]] = {}
    # Ours (and Google's) cut the line at a colon if there is one, the key being what
    # comes before it; else they take it only as two words.
    if colon:
        ours = after.strip(_WS) if directive_of(f"{word} {before}") else None
    else:
        ours = None if " " in rest or "\t" in rest else rest
    protego = None
    if word.lower() in _PROTEGO_KEYS and not (colon and (not after or after[0].isspace())):
        protego = " ".join(rest.split())
    for name, value in (
        ("Google's parser", ours if directive in _GOOGLE_READS else None),
        ("Protego", protego),
        ("ours", ours),
    ):
        if value is not None:
            readings.setdefault(value, []).append(name)
    if not readings:
        return None
    readers = {name for names in readings.values() for name in names}
    skip = [name for name, known in _KNOWN_TO.items() if directive in known and name not in readers]
    if "ours" not in readers:
        skip.append("ours")
    said = [
        f"{_names(names)} read{'s' if len(names) == 1 else ''} "
        + (f"{directive}: {value}" if value else f"an empty {directive}")
        for value, names in readings.items()
    ]
    if skip:
        said.append(f"{_names(skip)} skip{'s' if len(skip) == 1 else ''} the line")
    return f"no colon after {word}: {'; '.join(said)} (RFC 9309 requires the colon): write {directive}: {rest}"


def _names(names: list[str]) -> str:
    names = ["our parser" if names == ["ours"] else name for name in names]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _line_at_byte(lines: list[str], offset: int) -> int:
    end = 0
    for number, line in enumerate(lines, 1):
        end += len(line.encode("utf-8")) + 1
        if end > offset:
            return number
    return len(lines)


def _shorten(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."
