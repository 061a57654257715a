"""The AI-preference drafts as they stand: draft-ietf-aipref-vocab-08 (the labels, their
reading, combining) and draft-ietf-aipref-attach-05 (robots.txt Content-Usage rules),
with the labels of earlier drafts and Content-Signal lines before any User-agent
(docs/usage.rst). The cases are those of /work/shared/notes/standards.md section 1."""

from __future__ import annotations

import pytest

from scrapy_robots.rfc9309 import RobotsTxt
from scrapy_robots.usage import (
    FILE_WIDE,
    LEGACY_LABELS,
    USAGE_LABELS,
    header_preference,
    preference,
    site_preferences,
    split_usage_rule,
)

CATEGORIES = ("train-ai", "ai-use", "search")


def _said(found) -> str:
    return "unknown" if found is None or not found.stated else found.decision


def header_reading(value: str) -> tuple[str, ...]:
    return tuple(_said(header_preference(value, purpose)) for purpose in CATEGORIES)


def robots_reading(value: str, path: str = "/x") -> tuple[str, ...]:
    body = f"User-agent: *\nContent-Usage: {value}\n"
    return tuple(_said(preference(body, "AnyBot", path, purpose)) for purpose in CATEGORIES)


# vocab-08 section 6.5 and its examples (6.5.1, 6.5.2): standards.md 1.2's table, each
# row as (train-ai, ai-use, search).
TABLE = [
    ("train-ai=y, search=n", ("allow", "unknown", "deny")),
    ("train-ai=n;search=y", ("deny", "unknown", "unknown")),  # search is a parameter
    ('train-ai=y, train-ai, search=n, search="n"', ("unknown", "unknown", "unknown")),  # 6.5.1: last wins
    ("train-ai;allow=n, train-ai=y", ("allow", "unknown", "unknown")),  # 6.5.2
    ("Train-AI=n", ("unknown", "unknown", "unknown")),  # parse fails: keys are lower case
    ("train-ai = n", ("unknown", "unknown", "unknown")),  # parse fails
    ("train-ai=n,", ("unknown", "unknown", "unknown")),  # parse fails
    ("train-ai=N", ("unknown", "unknown", "unknown")),
    ("train-ai=no", ("unknown", "unknown", "unknown")),
    ("train-ai=?1", ("unknown", "unknown", "unknown")),
    ("train-ai", ("unknown", "unknown", "unknown")),
    ("ai-use=n, bots=n, search=y", ("unknown", "deny", "allow")),  # bots: unknown, ignored
]


@pytest.mark.parametrize("value, expected", TABLE)
def test_the_vocabulary_table_in_a_header(value, expected):
    assert header_reading(value) == expected


@pytest.mark.parametrize("value, expected", TABLE)
def test_the_vocabulary_table_in_robots_txt(value, expected):
    assert robots_reading(value) == expected


@pytest.mark.parametrize("value", ["Train-AI=n", "train-ai = n", "train-ai=n,"])
def test_a_header_that_does_not_parse_is_malformed_for_every_purpose(value):
    # All unknown (6.5.1), and said malformed so that the crawl counts it.
    assert all(header_preference(value, purpose) is None for purpose in CATEGORIES)


def test_the_labels_are_vocab_08s():
    assert USAGE_LABELS == {"train-ai", "ai-use", "search"}


# -- no nesting: a general label never fills a specific one --------------------------


@pytest.mark.parametrize("label", ["bots", "all", "ai", "tdm", "inference", "ai-output"])
def test_a_broader_label_of_an_earlier_draft_fills_nothing(label):
    assert LEGACY_LABELS[label].read_as is None
    for value in (f"{label}=n", f"{label}=y"):
        assert header_reading(value) == ("unknown", "unknown", "unknown"), value
        assert robots_reading(value) == ("unknown", "unknown", "unknown"), value
        # The purpose kept for older settings reads no parent either.
        assert _said(header_preference(value, "train-genai")) == "unknown"


@pytest.mark.parametrize("label", ["train-genai", "genai"])
def test_generative_training_of_earlier_drafts_is_read_as_train_ai(label):
    # vocab-08's train-ai is generative AI training: the same category, no nesting.
    assert LEGACY_LABELS[label].read_as == "train-ai"
    assert header_reading(f"{label}=n") == ("deny", "unknown", "unknown")
    assert robots_reading(f"{label}=y") == ("allow", "unknown", "unknown")
    assert _said(header_preference(f"{label}=n", "train-genai")) == "deny"


def test_a_current_label_and_a_legacy_one_combine_deny_wins():
    assert header_reading("train-ai=y, train-genai=n") == ("deny", "unknown", "unknown")
    assert header_reading("train-ai=n, train-genai=y") == ("deny", "unknown", "unknown")
    assert header_reading("train-ai=y, train-genai=y, bots=n") == ("allow", "unknown", "unknown")


def test_train_genai_as_a_purpose_reads_what_train_ai_reads():
    body = "User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: /g/ train-genai=y\n"
    for path in ("/x", "/g/x"):
        genai, train = (preference(body, "Bot", path, purpose) for purpose in ("train-genai", "train-ai"))
        assert (genai.decision, genai.line) == (train.decision, train.line), path
    assert preference(body, "Bot", "/g/x", "train-genai").line == 3


# -- attach-05 section 3: the robots.txt rule ----------------------------------------

# Section 3.4's example, as printed.
EXAMPLE = """\
User-Agent: *
Allow: /
Disallow: /never/
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y

User-Agent: ExampleBot
Allow: /
Content-Usage: train-ai=y
"""


def test_the_attach_example():
    robots = site_preferences(EXAMPLE)
    # All other crawlers use the first group.
    test = preference(robots, "OtherBot", "https://example.com/test", "train-ai")
    assert (test.decision, test.line) == ("deny", 4)
    assert robots.allowed("https://example.com/never/test", "OtherBot") is False
    never = preference(robots, "OtherBot", "https://example.com/never/test", "train-ai")
    assert never.stated is False  # not crawlable: no preference ("N/A")
    ok = preference(robots, "OtherBot", "https://example.com/ai-ok/test", "train-ai")
    assert (ok.decision, ok.line) == ("allow", 5)
    # ExampleBot uses the second group: train-ai=y everywhere, /never/ included.
    for path in ("/test", "/never/test", "/ai-ok/test"):
        found = preference(robots, "ExampleBot/1.0", f"https://example.com{path}", "train-ai")
        assert (found.decision, found.line) == ("allow", 9), path


def test_the_same_file_read_by_two_agents_in_turn():
    # The answers do not depend on which agent asked first, nor on asking twice.
    robots = site_preferences(EXAMPLE)
    answers = [
        (agent, preference(robots, agent, "/test", "train-ai").line)
        for agent in ("ExampleBot", "OtherBot", "ExampleBot", "OtherBot")
    ]
    assert answers == [("ExampleBot", 9), ("OtherBot", 4), ("ExampleBot", 9), ("OtherBot", 4)]
    # The label next to it: nobody says anything of search or ai-use.
    for agent in ("ExampleBot", "OtherBot"):
        assert preference(robots, agent, "/test", "search").stated is False
        assert preference(robots, agent, "/test", "ai-use").stated is False


def test_the_crawl_asks_for_a_url_its_own_parser_allowed():
    # The verdict asks the crawl's parser first; a URL it allowed is read as crawlable.
    found = preference(site_preferences(EXAMPLE), "OtherBot", "/never/test", "train-ai", crawlable=True)
    assert (found.decision, found.line) == ("deny", 4)


def test_the_longest_path_chooses_the_rule_not_the_label():
    # /news/ is the longest matching path: its rule says nothing of train-ai, so train-ai
    # is unknown there; the path-less train-ai=n does not fill it in.
    body = "User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: /news/ search=y\n"
    assert _said(preference(body, "Bot", "/news/1", "train-ai")) == "unknown"
    assert _said(preference(body, "Bot", "/news/1", "search")) == "allow"
    assert _said(preference(body, "Bot", "/other", "train-ai")) == "deny"
    assert _said(preference(body, "Bot", "/other", "search")) == "unknown"


def test_a_longer_rule_that_does_not_parse_still_holds_its_path():
    body = "User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: /a/ train-ai=n,\n"
    assert _said(preference(body, "Bot", "/a/x", "train-ai")) == "unknown"  # all unknown (6.5.1)
    assert _said(preference(body, "Bot", "/b", "train-ai")) == "deny"


def test_identical_paths_combine_most_restrictively():
    body = "User-agent: *\nContent-Usage: /a/ train-ai=y\nContent-Usage: /a/ train-ai=n\nAllow: /a/\n"
    found = preference(body, "Bot", "/a/x", "train-ai")
    assert (found.decision, found.line) == ("deny", 3)
    # The rule order carries no meaning.
    swapped = "User-agent: *\nContent-Usage: /a/ train-ai=n\nContent-Usage: /a/ train-ai=y\n"
    assert (preference(swapped, "Bot", "/a/x", "train-ai").line) == 2


def test_a_root_path_beats_no_path():
    body = "User-agent: *\nContent-Usage: /\ttrain-ai=y\nContent-Usage: train-ai=n\n"
    assert _said(preference(body, "Bot", "/x", "train-ai")) == "allow"


@pytest.mark.parametrize(
    "value, expected",
    [
        ("/a/ train-ai=n", ("/a/", "train-ai=n")),
        ("/a/\ttrain-ai=n, search=y", ("/a/", "train-ai=n, search=y")),  # HTAB ends the path too
        ("/a/ \t train-ai=n", ("/a/", "train-ai=n")),
        ("train-ai=n", (None, "train-ai=n")),
        ("*.pdf train-ai=n", (None, "*.pdf train-ai=n")),  # not a path: all preference
        ("/only", ("/only", "")),
    ],
)
def test_the_path_ends_at_the_first_blank(value, expected):
    assert split_usage_rule(value) == expected


def test_a_tab_separated_path_with_two_labels():
    body = "User-agent: *\nContent-Usage: /a/\ttrain-ai=n, search=y\n"
    assert robots_reading("/a/\ttrain-ai=n, search=y", "/a/x") == ("deny", "unknown", "allow")
    assert robots_reading("/a/\ttrain-ai=n, search=y", "/b") == ("unknown", "unknown", "unknown")
    assert preference(body, "Bot", "/a/x", "search").line == 2


def test_a_pattern_not_starting_with_a_slash_is_read_as_the_preference():
    # "*.pdf train-ai=n" does not parse: all unknown; it hides no path-less sibling.
    assert robots_reading("*.pdf train-ai=n", "/x.pdf") == ("unknown", "unknown", "unknown")
    body = "User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: *.pdf train-ai=y\n"
    assert _said(preference(body, "Bot", "/x.pdf", "train-ai")) == "deny"


def test_wildcards_percent_encoding_comments_and_key_spelling():
    body = (
        "User-agent: *\n"
        "content-usage : /*.pdf$ train-ai=n # no training on PDFs\n"
        "CONTENT-USAGE: /caf%C3%A9/ ai-use=n\n"
        "Content-Usage: /a%20b/ search=n\n"
    )
    assert _said(preference(body, "Bot", "/d/x.pdf", "train-ai")) == "deny"
    assert _said(preference(body, "Bot", "/d/x.pdfx", "train-ai")) == "unknown"
    assert _said(preference(body, "Bot", "/café/x", "ai-use")) == "deny"
    assert _said(preference(body, "Bot", "/caf%c3%a9/x", "ai-use")) == "deny"
    assert _said(preference(body, "Bot", "/a%20b/x", "search")) == "deny"
    assert preference(body, "Bot", "/d/x.pdf", "train-ai").text == "Content-Usage: /*.pdf$ train-ai=n"


def test_robots_txt_and_the_header_combine_per_vocab_5_1():
    from scrapy_robots.usage import stricter

    robots = preference("User-agent: *\nContent-Usage: train-ai=y\n", "Bot", "/x", "train-ai")
    header = header_preference("train-ai=n", "train-ai")
    assert stricter(robots, header).decision == "deny" and stricter(header, robots).decision == "deny"
    silent = header_preference("search=y", "train-ai")
    assert stricter(robots, silent) is robots and stricter(silent, robots) is robots


# -- Content-Signal before the first User-agent ---------------------------------------

FILE_WIDE_SIGNAL = """\
Content-Signal: search=yes, ai-train=no
User-agent: *
Disallow: /private

User-agent: FooBot
Content-Signal: search=no
Allow: /
"""
IN_GROUP_SIGNAL = """\
User-agent: *
Content-Signal: search=yes, ai-train=no
Disallow: /private
"""


def test_a_signal_before_any_user_agent_is_read_for_every_crawler_and_says_so():
    robots = site_preferences(FILE_WIDE_SIGNAL)
    assert robots is not None and robots.file_signals == ((1, "search=yes, ai-train=no"),)
    for agent in ("OtherBot", "FooBot", "OtherBot"):
        found = preference(robots, agent, "/page", "train-ai")
        assert (found.decision, found.line) == ("deny", 1), agent
        assert found.text == f"Content-Signal: search=yes, ai-train=no ({FILE_WIDE})"
        assert FILE_WIDE in found.reason
    # The label next to it: search. FooBot's own group says no, and a "no" wins.
    assert preference(robots, "OtherBot", "/page", "search").decision == "allow"
    search = preference(robots, "FooBot", "/page", "search")
    assert (search.decision, search.line) == ("deny", 6)
    assert preference(robots, "OtherBot", "/page", "ai-use").stated is False


def test_the_same_signal_in_a_group_reads_the_same_without_the_note():
    found = preference(IN_GROUP_SIGNAL, "OtherBot", "/page", "train-ai")
    assert (found.decision, found.line, found.text) == ("deny", 2, "Content-Signal: search=yes, ai-train=no")
    assert FILE_WIDE not in found.reason


def test_a_file_with_only_a_signal_before_any_user_agent_keeps_its_preferences():
    assert site_preferences("Content-Signal: ai-train=no\n") is not None
    assert preference("Content-Signal: ai-train=no\n", "Bot", "/x", "train-ai").denied


def test_a_content_usage_line_before_any_user_agent_is_nobodys():
    # attach-05 section 3: a rule of a group.
    body = "Content-Usage: train-ai=n\nUser-agent: *\nAllow: /\n"
    assert preference(body, "Bot", "/x", "train-ai").stated is False
    assert site_preferences(body) is None


def test_a_plain_robotstxt_has_no_file_wide_signals():
    # RobotsTxt.parse keeps stray lines without their directive: pass the body instead.
    assert preference(RobotsTxt.parse(FILE_WIDE_SIGNAL), "Bot", "/x", "train-ai").stated is False
    assert preference(FILE_WIDE_SIGNAL.encode(), "Bot", "/x", "train-ai").denied
