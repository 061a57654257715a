"""--lint on usage preference lines: malformed, unknown names, outside any group."""

from __future__ import annotations

import pytest

from scrapy_robots.lint import (
    BAD_PREFERENCE,
    FILE_WIDE_SIGNAL,
    LEGACY_LABEL,
    RECORD_BEFORE_USER_AGENT,
    UNKNOWN_PREFERENCE,
    lint_robotstxt,
)

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
        (1, FILE_WIDE_SIGNAL),
        (3, UNKNOWN_PREFERENCE),
        (4, BAD_PREFERENCE),
        (5, BAD_PREFERENCE),
        (5, UNKNOWN_PREFERENCE),
        (7, LEGACY_LABEL),
        (7, LEGACY_LABEL),
    ]
    messages = {f.line: str(f) for f in lint_robotstxt(SAMPLE)}
    assert "did you mean ai-train?" in messages[3]


def test_well_formed_lines_are_no_finding():
    assert lint_robotstxt(b"User-agent: *\nContent-Signal: search=yes, ai-train=no\nContent-Usage: train-ai=n\n") == []


# Each label of an earlier draft, the draft it came from, and whether it is still read.
LEGACY = [
    ("ai", "vocab-01", "it is ignored"),
    ("genai", "vocab-01", "still reads it as train-ai"),
    ("tdm", "vocab-01", "it is ignored"),
    ("inference", "vocab-01", "it is ignored"),
    ("all", "vocab-02", "it is ignored"),
    ("train-genai", "vocab-02 and -03", "still reads it as train-ai"),
    ("bots", "vocab-03 and -04", "it is ignored"),
    ("ai-output", "vocab-04", "it is ignored"),
]


@pytest.mark.parametrize("label, draft, reading", LEGACY)
def test_each_label_of_an_earlier_draft_is_flagged_with_its_draft(label, draft, reading):
    for value in (f"{label}=n", f"/a/ search=y, {label}=y"):
        [finding] = lint_robotstxt(f"User-agent: *\nContent-Usage: {value}\n".encode())
        assert (finding.line, finding.code) == (2, LEGACY_LABEL), value
        assert f"'{label}' is a label of {draft}" in finding.message
        assert reading in finding.message


def test_a_legacy_label_in_a_content_signal_is_just_unknown():
    [finding] = lint_robotstxt(b"User-agent: *\nContent-Signal: bots=no\n")
    assert finding.code == UNKNOWN_PREFERENCE


def test_a_signal_before_any_user_agent_says_how_it_is_read_and_is_still_checked():
    findings = lint_robotstxt(b"Content-Signal: ai-train=no, ai_input=yes\nUser-agent: *\nAllow: /\n")
    assert [(f.line, f.code) for f in findings] == [(1, FILE_WIDE_SIGNAL), (1, UNKNOWN_PREFERENCE)]
    assert "reads it for every crawler" in findings[0].message
    # In a group, the same line is no finding: both placements are read.
    assert lint_robotstxt(b"User-agent: *\nContent-Signal: ai-train=no\nAllow: /\n") == []


def test_a_usage_line_before_any_user_agent_applies_to_no_crawler():
    [finding] = lint_robotstxt(b"Content-Usage: train-ai=n\nUser-agent: *\nAllow: /\n")
    assert (finding.line, finding.code) == (1, RECORD_BEFORE_USER_AGENT)
    assert "attach-05 section 3" in finding.message


@pytest.mark.parametrize(
    "value, says",
    [
        ('train-ai="n"', 'train-ai="n" is not train-ai=y/n'),  # a String, not a Token (vocab-08 6.5)
        ("train-ai", "train-ai is not train-ai=y/n"),
        ("train-ai=no", "train-ai=no is not train-ai=y/n"),
        ("Train-AI=n", "labels are lower case (vocab-08 6.1): write train-ai=n"),
        ("*.pdf train-ai=n", "a path must start with '/' (attach-05 3.2)"),
    ],
)
def test_values_the_vocabulary_reads_as_unknown(value, says):
    [finding] = lint_robotstxt(f"User-agent: *\nContent-Usage: {value}\n".encode())
    assert finding.code == BAD_PREFERENCE
    assert says in finding.message, finding.message


def test_a_tab_separated_path_and_the_current_labels_are_no_finding():
    body = b"User-agent: *\nContent-Usage: /a/\ttrain-ai=n, ai-use=y, search=y\nContent-Usage: /b/ train-ai=y\n"
    assert lint_robotstxt(body) == []
