"""--lint on usage preference lines: malformed, unknown names, outside any group."""

from __future__ import annotations

from scrapy_robots.lint import BAD_PREFERENCE, RECORD_BEFORE_USER_AGENT, UNKNOWN_PREFERENCE, lint_robotstxt

SAMPLE = b"""\
Content-Signal: ai-train=no
User-agent: *
Content-Signal: search=yes, ai_train=no
Content-Usage: /a train-ai=n,
Content-Usage: train-ai=maybe, trian-ai=n
Content-Signal: search=yes, ai-input=yes, ai-train=no
Content-Usage: /photos/ train-genai=n, bots=y
Allow: /
"""


def test_usage_lines_are_linted():
    found = [(f.line, f.code) for f in lint_robotstxt(SAMPLE)]
    assert found == [
        (1, RECORD_BEFORE_USER_AGENT),
        (3, UNKNOWN_PREFERENCE),
        (4, BAD_PREFERENCE),
        (5, BAD_PREFERENCE),
        (5, UNKNOWN_PREFERENCE),
    ]
    messages = {f.line: str(f) for f in lint_robotstxt(SAMPLE)}
    assert "did you mean ai-train?" in messages[3]


def test_well_formed_lines_are_no_finding():
    assert lint_robotstxt(b"User-agent: *\nContent-Signal: search=yes, ai-train=no\nContent-Usage: train-ai=n\n") == []
