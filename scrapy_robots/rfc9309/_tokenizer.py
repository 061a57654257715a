"""One pass over a robots.txt: each line becomes one event, with its line number.

The rule-set builder is one consumer of these events; a linter, a statistics
collector or anything else that reads robots.txt is another, and none of them
re-parses the file. The shape follows Google's ``ParseRobotsTxt(body, handler)``.
"""

from __future__ import annotations

from typing import Final

#: Canonical directive names, as :func:`directive_of` returns them.
USER_AGENT: Final = "user-agent"
ALLOW: Final = "allow"
DISALLOW: Final = "disallow"
SITEMAP: Final = "sitemap"
CRAWL_DELAY: Final = "crawl-delay"
REQUEST_RATE: Final = "request-rate"
VISIT_TIME: Final = "visit-time"
HOST: Final = "host"
CLEAN_PARAM: Final = "clean-param"
CONTENT_SIGNAL: Final = "content-signal"
CONTENT_USAGE: Final = "content-usage"
LICENSE: Final = "license"

# Google strips ASCII whitespace only; str.strip() would also eat U+00A0 and
# friends, which belong to the value.
_WS: Final = " \t\v\f"

# Spellings of the extension directives, after lower-casing and turning spaces
# and underscores into hyphens.
_EXTENSIONS: Final = {
    "crawl-delay": CRAWL_DELAY,
    "crawldelay": CRAWL_DELAY,
    "request-rate": REQUEST_RATE,
    "requestrate": REQUEST_RATE,
    "visit-time": VISIT_TIME,
    "visittime": VISIT_TIME,
    "host": HOST,
    "clean-param": CLEAN_PARAM,
    "cleanparam": CLEAN_PARAM,
    "content-signal": CONTENT_SIGNAL,
    "contentsignal": CONTENT_SIGNAL,
    "content-usage": CONTENT_USAGE,
    "contentusage": CONTENT_USAGE,
    "license": LICENSE,
}


def directive_of(key: str) -> str | None:
    """The directive a line's key names, or ``None`` for an unknown key.

    The one place where spelling leniency lives. Like Google's parser, a key
    names a directive when it *starts with* its name, case-insensitively, and
    a few frequent typos are accepted: ``useragent``, ``user agent``,
    ``disalow``, ``dissallow``, ``dissalow``, ``diasllow``, ``disallaw``,
    ``site-map``. The extension directives (``Crawl-delay``, ``Request-rate``,
    ``Visit-time``, ``Host``, ``Clean-param``, and the usage preferences
    ``Content-Signal`` and ``Content-Usage``, and RSL's ``License``) must be spelt
    out, with a hyphen, a space, an underscore or nothing between their words.
    """
    lowered = key.lower()
    if lowered.startswith(("user-agent", "useragent", "user agent")):
        return USER_AGENT
    if lowered.startswith("allow"):
        return ALLOW
    if lowered.startswith(("disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw")):
        return DISALLOW
    if lowered.startswith(("sitemap", "site-map")):
        return SITEMAP
    return _EXTENSIONS.get(lowered.replace(" ", "-").replace("_", "-"))


class RobotsTxtHandler:
    """Receives the lines of a robots.txt from :func:`parse_robotstxt`, in file order.

    Subclass it and override the methods you need; the defaults do nothing.
    ``line`` is the 1-based line number (``\\r``, ``\\n`` and ``\\r\\n`` each end
    a line). ``value`` has its surrounding whitespace and any ``# comment``
    removed, and is otherwise as written: percent-encoding and wildcards are
    the consumer's business.
    """

    def handle_start(self) -> None:
        """Called once, before the first line."""

    def handle_user_agent(self, line: int, value: str) -> None:
        """A ``User-agent`` line."""

    def handle_allow(self, line: int, value: str) -> None:
        """An ``Allow`` line."""

    def handle_disallow(self, line: int, value: str) -> None:
        """A ``Disallow`` line (or one of its accepted typos)."""

    def handle_sitemap(self, line: int, value: str) -> None:
        """A ``Sitemap`` line."""

    def handle_crawl_delay(self, line: int, value: str) -> None:
        """A ``Crawl-delay`` line."""

    def handle_request_rate(self, line: int, value: str) -> None:
        """A ``Request-rate`` line."""

    def handle_visit_time(self, line: int, value: str) -> None:
        """A ``Visit-time`` line."""

    def handle_host(self, line: int, value: str) -> None:
        """A ``Host`` line."""

    def handle_clean_param(self, line: int, value: str) -> None:
        """A ``Clean-param`` line."""

    def handle_content_signal(self, line: int, value: str) -> None:
        """A ``Content-Signal`` line (Content Signals Policy: ``search=yes, ai-train=no``)."""

    def handle_content_usage(self, line: int, value: str) -> None:
        """A ``Content-Usage`` line (IETF AI Preferences: ``[path] train-ai=n``)."""

    def handle_license(self, line: int, value: str) -> None:
        """A ``License`` line (RSL 1.0: the absolute URL of an RSL document)."""

    def handle_unknown(self, line: int, key: str, value: str) -> None:
        """A ``key: value`` line whose key names no directive."""

    def handle_invalid(self, line: int, text: str) -> None:
        """A line that is neither blank, a comment, nor ``key: value``.

        ``text`` is the line without its comment and surrounding whitespace.
        """

    def handle_end(self) -> None:
        """Called once, after the last line."""


def parse_robotstxt(text: str, handler: RobotsTxtHandler) -> None:
    """Walk ``text`` once and report each line to ``handler``.

    Never raises on any text. A line is ``key: value``; without a colon,
    ``key value`` (exactly two words) is accepted too, as Google does. Blank
    lines and comments produce no event. Decode bytes with
    :func:`scrapy_robots.decoding.decode_robotstxt` first.
    """
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if text.startswith("\ufeff"):
        text = text[1:]
    dispatch = {
        USER_AGENT: handler.handle_user_agent,
        ALLOW: handler.handle_allow,
        DISALLOW: handler.handle_disallow,
        SITEMAP: handler.handle_sitemap,
        CRAWL_DELAY: handler.handle_crawl_delay,
        REQUEST_RATE: handler.handle_request_rate,
        VISIT_TIME: handler.handle_visit_time,
        HOST: handler.handle_host,
        CLEAN_PARAM: handler.handle_clean_param,
        CONTENT_SIGNAL: handler.handle_content_signal,
        CONTENT_USAGE: handler.handle_content_usage,
        LICENSE: handler.handle_license,
    }
    # Keys repeat ("Disallow", "Disallow" ...): classify each spelling once per
    # file, keyed by the raw text before the colon so that the common line costs
    # one partition, one dict lookup and one strip.
    known: dict[str, object] = {}
    unknown = handler.handle_unknown
    invalid = handler.handle_invalid
    ws = _WS
    handler.handle_start()
    number = 0
    for line in text.split("\n"):
        number += 1
        if "#" in line:
            line = line[: line.index("#")]
        key, colon, value = line.partition(":")
        if not colon:
            line = line.strip(ws)
            if not line:
                continue
            # Google accepts a missing colon when the line is exactly two words.
            cut = _first_blank(line)
            if cut < 0:
                invalid(number, line)
                continue
            key = line[:cut]
            value = line[cut:].lstrip(" \t")
            if " " in value or "\t" in value:
                invalid(number, line)
                continue
        method = known.get(key)
        if method is None:
            stripped = key.strip(ws)
            if not stripped:
                if line.strip(ws):
                    invalid(number, line.strip(ws))
                continue
            directive = directive_of(stripped)
            method = dispatch[directive] if directive else stripped
            known[key] = method
        if method.__class__ is str:
            unknown(number, method, value.strip(ws))
        else:
            method(number, value.strip(ws))  # type: ignore[operator]
    handler.handle_end()


def _first_blank(line: str) -> int:
    space = line.find(" ")
    tab = line.find("\t")
    if space < 0:
        return tab
    if tab < 0:
        return space
    return min(space, tab)
