"""What ``scrapy robots`` reads from the user: URLs, the ``--file`` robots.txt, the
``--urls`` list, and arguments that are none of these (each refused in words that say
what to give instead)."""

from __future__ import annotations

import difflib
import logging
import re
import sys
from pathlib import Path
from urllib.parse import urlsplit

from scrapy.utils.misc import load_object

from scrapy_robots.lint import looks_binary
from scrapy_robots.parsers import SHORT_NAMES, check_parser_class
from scrapy_robots.usage import ALIASES, PURPOSES, canonical_purpose

# A bare path given with --file is checked as a URL of this site.
FILE_SITE = "https://example.com"

# A robots.txt line where a URL is expected: a robots.txt given as a URL or to --urls.
_ROBOTS_LINE = re.compile(r"(user-agent|disallow|allow|sitemap|crawl-delay)\s*:", re.IGNORECASE)
# A URL written without its scheme: a host name with a dot (or localhost), then a port, a path or nothing.
_HOST_FIRST = re.compile(r"(localhost|[^\s/:.@]+(\.[^\s/:.@]+)+)(:\d*)?([/?#]|$)", re.IGNORECASE)
# What a host name never holds, and Scrapy would only fail on when it fetches.
_NOT_IN_HOST = set('<>"{}|\\^`')

_PATH_HINT = (
    "a path needs --file PATH (the robots.txt to check it against), a URL its scheme and host (https://HOST/PATH)"
)


def check_url(url: str, local_file: bool) -> tuple[str | None, str | None]:
    """``(absolute URL, None)``, or ``(None, error)`` for input that names no web page."""
    if local_file and url.startswith("/"):
        return FILE_SITE + url, None
    if _ROBOTS_LINE.match(url):
        return None, f"{url!r} is a robots.txt line, not a URL: give a robots.txt with --file PATH"
    try:
        parts = urlsplit(url)
        parts.hostname  # noqa: B018 - raises on a bad IPv6 literal ('https://[::1/x')
    except ValueError as exc:
        return None, f"{url!r} is not a valid URL ({exc})"
    rest = url.partition(":")[2]
    if parts.scheme.lower() in ("http", "https"):
        if not parts.hostname:
            return None, f"{url!r} has no host name (an http(s) URL is https://HOST/PATH)"
        bad = next((c for c in parts.netloc if c.isspace() or not c.isprintable() or c in _NOT_IN_HOST), None)
        if bad is not None:
            return None, f"{url!r} is not a valid URL: a host name cannot hold {bad!r}"
        try:
            parts.port  # noqa: B018 - raises on a bad port
        except ValueError:
            return None, f"{url!r} has an invalid port"
        return url, None
    if parts.scheme and "." not in parts.scheme and not re.match(r"\d+([/?#]|$)", rest):
        # mailto:, ftp://, file:, javascript:... (localhost:8080/x is a host and its port)
        return None, f"{url!r} is not a web (http/https) URL: robots.txt speaks only of those"
    if Path(url).is_file():
        return None, (
            f"{url!r} is a local file, not a URL: check a robots.txt with --file {url}, "
            f"the URLs listed in a file with --urls {url}"
        )
    scheme_relative = url.startswith("//")
    bare = url[2:] if scheme_relative else url
    if (scheme_relative or not url.startswith("/")) and _HOST_FIRST.match(bare):
        return None, f"{url!r} is not an absolute http(s) URL (did you mean 'https://{bare}'?)"
    if local_file:
        return None, (
            f"{url!r} is not an absolute http(s) URL or a path: with --file a path starts with '/' "
            f"(did you mean '/{url.lstrip('./')}'?)"
        )
    return None, f"{url!r} is not an absolute http(s) URL: {_PATH_HINT}"


# "robots.txt for https://example.com:443": how the crawl's log names a site's robots.txt.
_SITE_ROBOTS = re.compile(r"robots\.txt for (https?://(?:\[[^\]]*\]|[^\s/:\[]+):\d+)")


class NameTheFile(logging.Filter):
    """``--file``: the robots.txt of every site is the file, and a bare path's site is
    made up (FILE_SITE): the log lines of the crawl name the file instead."""

    def __init__(self, path: str):
        super().__init__()
        self.file = "robots.txt from standard input (--file -)" if path == "-" else f"robots.txt in {path!r} (--file)"
        self.made_up = f"{FILE_SITE}:443"

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        named = _SITE_ROBOTS.sub(self._name, message)
        if named != message:
            record.msg, record.args = named, ()
        return True

    def _name(self, match: re.Match[str]) -> str:
        return self.file if match[1] == self.made_up else f"{self.file} for {match[1]}"

    def install(self) -> None:
        """On each of this package's loggers (a filter on a logger applies to its own records)."""
        import scrapy_robots.middleware  # noqa: F401 - every module that logs a site, imported

        for name in list(logging.root.manager.loggerDict):
            if name.startswith("scrapy_robots."):
                logging.getLogger(name).addFilter(self)


def unknown_options(args: list[str], known: list[str]) -> str | None:
    """The usage error for arguments that look like options the command does not have
    (Scrapy hands them over with the URLs): ``--briefly`` is a typo, not a URL."""
    unknown = [arg for arg in args if arg.startswith("-") and arg != "-"]
    if not unknown:
        return None
    close = difflib.get_close_matches(unknown[0].split("=")[0], [k for k in known if k.startswith("--")], n=1)
    hint = f" (did you mean {close[0]}?)" if close and len(unknown) == 1 else ""
    return f"unrecognized arguments: {' '.join(unknown)}{hint}"


def parser_option(name: str) -> tuple[str, str | None]:
    """``--parser``'s value as an import path (it takes a short name or an import path),
    and the problem, in words that name ``--parser``, if it names no usable parser class."""
    value = name.strip()
    path = SHORT_NAMES.get(value.lower(), value)
    choices = (
        f"give a short name ({', '.join(SHORT_NAMES)}) or the import path of a parser class such as "
        "'scrapy_robots.parsers.ProtegoParser'"
    )
    try:
        cls = load_object(path)
    except ImportError as exc:
        if value.lower() in SHORT_NAMES:  # an optional library: its own message says how to install it
            return path, f"--parser {name} cannot be loaded: {exc}"
        return path, f"--parser {name!r} cannot be loaded ({exc}); {choices}"
    except (NameError, ValueError, AttributeError) as exc:
        if "." not in path:
            return path, f"--parser {name!r}: no parser has that short name; {choices}"
        return path, f"--parser {name!r} cannot be loaded ({exc}); {choices}"
    try:
        check_parser_class("--parser", cls)
    except ValueError as exc:
        return path, str(exc)
    return path, None


def usage_option(value: str) -> str | None:
    """The problem with ``--usage``'s purposes, in words that name ``--usage``."""
    for name in (part.strip() for part in value.split(",") if part.strip()):
        try:
            canonical_purpose(name)
        except ValueError:
            which = "" if name == value.strip() else f" {name!r}"
            return f"--usage {value!r}: unknown purpose{which}; known purposes: {', '.join([*PURPOSES, *ALIASES])}"
    return None


def user_agent_option(agents: list[str]) -> str | None:
    """The problem with a ``--user-agent`` that names no agent: an empty one is a mistake
    (a shell variable that was not set), not a request for the crawl's own agent."""
    empty = next((agent for agent in agents if not agent.strip()), None)
    if empty is None:
        return None
    return (
        f"--user-agent {empty!r}: an agent needs a name (--user-agent FooBot); leave the option out to ask "
        "as the crawl does (ROBOTSTXT_USER_AGENT, else USER_AGENT)"
    )


def given(option: str, path: str) -> str:
    """The option and the path the user gave, as an error names them."""
    return f"{option} - (standard input)" if path == "-" else f"{option} {path!r}"


#: What each option that reads a file expects there, for the error that names the option.
_FILE_OF = {"--file": "a robots.txt file", "--urls": "a file of URLs, one a line"}


def read_bytes(option: str, path: str) -> tuple[bytes | None, str | None]:
    """A file's bytes (``-``: standard input), or the problem in words that name ``option``."""
    try:
        return (sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()), None
    except IsADirectoryError:
        return None, f"{given(option, path)} is a directory: give the path of {_FILE_OF[option]}"
    except OSError as exc:
        return None, f"{given(option, path)}: cannot read it ({exc.strerror or exc})"


def read_robotstxt(path: str) -> tuple[bytes | None, str | None]:
    body, problem = read_bytes("--file", path)
    if body is not None and looks_binary(body):
        return None, f"{given('--file', path)} is binary data, not a robots.txt"
    return body, problem


def read_urls(path: str) -> tuple[list[str], str | None]:
    data, problem = read_bytes("--urls", path)
    if data is None:
        return [], problem
    urls = []
    # utf-8-sig: a byte-order mark (Windows editors write one) is not part of the first URL.
    for number, line in enumerate(data.decode("utf-8-sig", "replace").splitlines(), 1):
        line = line.strip()
        if _ROBOTS_LINE.match(line):
            return [], (
                f"{given('--urls', path)} looks like a robots.txt, not a list of URLs (line {number}: {line!r}): "
                "give a robots.txt with --file PATH"
            )
        if line and not line.startswith("#"):
            urls.append(line)
    return urls, None
