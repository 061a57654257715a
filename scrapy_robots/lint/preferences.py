"""The lint of the lines that state preferences and licenses (``Content-Signal``,
``Content-Usage``, RSL's ``License``): a part of :class:`~scrapy_robots.lint.RobotsTxtLinter`,
which reads every other line; checked as :mod:`scrapy_robots.usage` and RSL 1.0 read them."""

from __future__ import annotations

import difflib
from typing import Any

from scrapy_robots.lint.codes import (
    BAD_PREFERENCE,
    FILE_WIDE_SIGNAL,
    LEGACY_LABEL,
    RECORD_BEFORE_USER_AGENT,
    RELATIVE_LICENSE,
    SEVERAL_LICENSES,
    UNKNOWN_PREFERENCE,
)
from scrapy_robots.usage import (
    LEGACY_LABELS,
    SIGNALS,
    USAGE_LABELS,
    parse_content_signal,
    parse_content_usage,
    split_usage_rule,
)
from scrapy_robots.utils.sfv import Token, parse_sf_dictionary


class PreferenceLines:
    """The checks of the preference and license lines, mixed into the linter before the
    parser's group builder (``super()`` reaches it): they use the linter's ``_add``,
    ``_spelling``, ``_group_record``, ``_group``, ``_garbled`` and ``_first_license``."""

    _group: Any
    _garbled: set[int]
    _first_license: dict[int | None, int]

    def _add(self, line: int, code: str, message: str) -> None:
        raise NotImplementedError

    def _spelling(self, line: int, directive: str) -> None:
        raise NotImplementedError

    def _group_record(self, line: int, directive: str, value: str, earlier: object) -> bool:
        raise NotImplementedError

    def handle_content_signal(self, line: int, value: str) -> None:
        self._spelling(line, "Content-Signal")
        if self._group is None:
            # Sites put it there as often as in a group; scrapy_robots.usage reads it for
            # every crawler: say so, and check it as any other.
            self._add(
                line,
                FILE_WIDE_SIGNAL,
                f"Content-Signal: {value} comes before any User-agent line: scrapy-robots reads it for every "
                "crawler, with each group's own Content-Signal lines (a 'no' wins); readers that take it as a "
                "group record ignore it: put it in the User-agent: * group to be read the same everywhere",
            )
        if self._group is None or self._group_record(line, "Content-Signal", value, None):
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
        if self._group is None:
            self._add(
                line,
                RECORD_BEFORE_USER_AGENT,
                f"Content-Usage: {value} comes before any User-agent line: it applies to no crawler "
                "(attach-05 section 3: a rule of a group)",
            )
        else:
            scope, prefs = split_usage_rule(value)
            if parse_content_usage(prefs) is None:
                self._add(line, BAD_PREFERENCE, _usage_syntax(value, scope, prefs))
            else:
                self._check_names(line, "Content-Usage", parse_sf_dictionary(prefs) or {}, USAGE_LABELS, "y/n")
        super().handle_content_usage(line, value)

    def handle_license(self, line: int, value: str) -> None:
        self._spelling(line, "License")
        if not value.lower().startswith(("http://", "https://")) and line not in self._garbled:
            self._add(
                line,
                RELATIVE_LICENSE,
                f"License: {value} is not an absolute http(s) URL: RSL 1.0 requires one (scheme and host)",
            )
        scope = id(self._group) if self._group is not None else None
        first = self._first_license.setdefault(scope, line)
        if first != line:
            whose = "this group's crawlers" if scope is not None else "every crawler (before any User-agent)"
            self._add(
                line,
                SEVERAL_LICENSES,
                f"a second License line for {whose} (the first is line {first}): RSL crawlers must read and "
                "combine both, many read only the first; state the terms in one RSL document",
            )
        super().handle_license(line, value)

    def _check_names(
        self, line: int, directive: str, parsed: dict[str, object], known: frozenset[str], values: str
    ) -> None:
        for name, value in parsed.items():
            if directive == "Content-Usage" and name in LEGACY_LABELS:
                self._add(line, LEGACY_LABEL, _legacy_message(name))
            elif name not in known:
                close = difflib.get_close_matches(name.replace("_", "-"), sorted(known), n=1, cutoff=0.6)
                hint = f" (did you mean {close[0]}?)" if close else ""
                self._add(line, UNKNOWN_PREFERENCE, f"{directive}: unknown name {name!r}{hint}: it is ignored")
            elif not isinstance(value, Token) or value not in values.split("/"):
                # A string "n" or a bare key (true) is no Token: unknown (vocab-08 6.5).
                shown = "" if value is True else f"={_sf_text(value)}"
                self._add(line, BAD_PREFERENCE, f"{directive}: {name}{shown} is not {name}={values}: it is ignored")


def _legacy_message(name: str) -> str:
    """What a label of an earlier vocabulary draft means now (vocab-08), and to us."""
    legacy = LEGACY_LABELS[name]
    said = f"Content-Usage: {name!r} is a label of {legacy.drafts} ({legacy.meaning}); vocab-08 has no such label"
    if legacy.read_as is not None:
        return (
            f"{said}: scrapy-robots still reads it as {legacy.read_as} (the same category), other readers "
            f"ignore it: write {legacy.read_as}"
        )
    return (
        f"{said}, and a broader label no longer fills a narrower one (no nesting since vocab-07): it is "
        "ignored; state train-ai, ai-use and search each"
    )


def _usage_syntax(value: str, scope: str | None, prefs: str) -> str:
    """Why a Content-Usage value does not parse, with the fix when it is a common one."""
    message = (
        f"Content-Usage: {value} is not '[/path] label=y|n, ...' (an RFC 9651 dictionary): every "
        "preference of the line is unknown (vocab-08 6.5.1)"
    )
    first = value.split(None, 1)[0] if value.split() else ""
    if scope is None and "=" not in first and len(value.split(None, 1)) == 2:
        return f"{message}; a path must start with '/' (attach-05 3.2): {first!r} is read as part of the preference"
    if parse_content_usage(prefs.lower()) is not None:
        return f"{message}; labels are lower case (vocab-08 6.1): write {prefs.lower()}"
    return message


def _sf_text(value: object) -> str:
    return f'"{value}"' if isinstance(value, str) and not isinstance(value, Token) else str(value)
