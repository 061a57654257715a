"""The tokenizer: one pass, one event per line, with line numbers, to any handler."""

from __future__ import annotations

import subprocess
import sys

from scrapy_robots.rfc9309 import RobotsTxtHandler, directive_of, parse_robotstxt


class Recorder(RobotsTxtHandler):
    def __init__(self) -> None:
        self.events: list[tuple[object, ...]] = []

    def handle_start(self) -> None:
        self.events.append(("start",))

    def handle_user_agent(self, line: int, value: str) -> None:
        self.events.append(("user-agent", line, value))

    def handle_allow(self, line: int, value: str) -> None:
        self.events.append(("allow", line, value))

    def handle_disallow(self, line: int, value: str) -> None:
        self.events.append(("disallow", line, value))

    def handle_sitemap(self, line: int, value: str) -> None:
        self.events.append(("sitemap", line, value))

    def handle_crawl_delay(self, line: int, value: str) -> None:
        self.events.append(("crawl-delay", line, value))

    def handle_unknown(self, line: int, key: str, value: str) -> None:
        self.events.append(("unknown", line, key, value))

    def handle_invalid(self, line: int, text: str) -> None:
        self.events.append(("invalid", line, text))

    def handle_end(self) -> None:
        self.events.append(("end",))


def events(text: str) -> list[tuple[object, ...]]:
    recorder = Recorder()
    parse_robotstxt(text, recorder)
    return recorder.events


def test_each_line_is_one_event_with_its_number() -> None:
    text = (
        "# comment\r\n"
        "User-Agent: FooBot # trailing\r\n"
        "\r\n"
        "Disallow:  /a b \r"
        "allow:\n"
        "Sitemap: https://example.com/s.xml\n"
        "Crawl-delay: 2\n"
        "Noindex: /x\n"
        "nonsense\n"
        "Disallow /c\n"
        "too many words here\n"
        ": no key\n"
    )
    assert events(text) == [
        ("start",),
        ("user-agent", 2, "FooBot"),
        ("disallow", 4, "/a b"),
        ("allow", 5, ""),
        ("sitemap", 6, "https://example.com/s.xml"),
        ("crawl-delay", 7, "2"),
        ("unknown", 8, "Noindex", "/x"),
        ("invalid", 9, "nonsense"),
        ("disallow", 10, "/c"),
        ("invalid", 11, "too many words here"),
        ("invalid", 12, ": no key"),
        ("end",),
    ]


def test_base_handler_ignores_everything() -> None:
    parse_robotstxt("User-agent: *\nDisallow: /\nfoo: bar\nHost: x\n", RobotsTxtHandler())


def test_directive_spelling_leniency() -> None:
    assert directive_of("User-agent") == "user-agent"
    assert directive_of("user agent") == "user-agent"
    assert directive_of("USERAGENT") == "user-agent"
    assert directive_of("disalow") == "disallow"
    assert directive_of("Disallowed") == "disallow"
    assert directive_of("Allow") == "allow"
    assert directive_of("site-map") == "sitemap"
    assert directive_of("Crawl delay") == "crawl-delay"
    assert directive_of("crawl_delay") == "crawl-delay"
    assert directive_of("Request-rate") == "request-rate"
    assert directive_of("Visit-time") == "visit-time"
    assert directive_of("Clean-param") == "clean-param"
    assert directive_of("Host") == "host"
    assert directive_of("Noindex") is None
    assert directive_of("hostname") is None


def test_importing_the_library_does_not_import_scrapy() -> None:
    code = (
        "import sys\n"
        "import scrapy_robots.rfc9309 as r\n"
        "r.RobotsTxt.parse(b'User-agent: *\\nDisallow: /').allowed('http://a/x', 'Foo')\n"
        "bad = sorted(m for m in sys.modules if m == 'scrapy' or m.startswith(('scrapy.', 'twisted')))\n"
        "print(bad)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
