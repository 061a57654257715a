"""RSL 1.0 (issue #50, the reader): the document's grammar, its evaluation for usage
tokens and declared purposes, discovery (robots.txt, Link header, page), and lint. No
crawl: scrapy_robots.rsl is pure and not wired into the crawl yet. The spec's and its
guides' examples (docs/notes: standards.md 2.3) are files in tests/rsl_files/."""

from __future__ import annotations

import ast
import time
from pathlib import Path

import pytest
from scrapy.http import Headers

from scrapy_robots.lint import RELATIVE_LICENSE, SEVERAL_LICENSES, UNKNOWN_DIRECTIVE, lint_robotstxt
from scrapy_robots.rsl import (
    DOCTYPE,
    EMPTY,
    HTML_PAGE,
    LICENSE_REQUIRED,
    LICENSED,
    LINK_HEADER,
    MAX_BYTES,
    NOT_LICENSED,
    NOT_RSL,
    NOT_XML,
    PAGE,
    PURPOSE_TOKENS,
    ROBOTSTXT,
    TOO_LARGE,
    UNSTATED,
    USAGE_PARENTS,
    covers,
    evaluate,
    header_licenses,
    page_licenses,
    parse_rsl,
    purpose_answer,
    robotstxt_licenses,
)
from scrapy_robots.usage import PURPOSES

FILES = Path(__file__).parent / "rsl_files"
TOKENS = ("all", "ai-all", "ai-train", "ai-input", "ai-index", "search")


def document(name: str):
    return parse_rsl((FILES / name).read_bytes())


def verdicts(doc, url: str) -> dict[str, str]:
    return {token: evaluate(doc, url, token).verdict for token in TOKENS}


def rsl(*contents: str) -> bytes:
    return ('<rsl xmlns="https://rslstandard.org/rsl">' + "".join(contents) + "</rsl>").encode()


def content(url: str, *licenses: str, server: str = "") -> str:
    attributes = f' server="{server}"' if server else ""
    return (
        f'<content url="{url}"{attributes}>' + "".join(f"<license>{body}</license>" for body in licenses) + "</content>"
    )


# -- the spec's examples -------------------------------------------------------------


def test_a_narrower_content_prohibits_one_use_and_the_site_permits_the_rest():
    # standards.md 2.3 (a), RSL 1.0 3.1.2.
    doc = document("scope.xml")
    assert doc.ok and len(doc.contents) == 2
    assert verdicts(doc, "https://example.com/articles/x") == {
        "all": NOT_LICENSED,  # it covers ai-train
        "ai-all": NOT_LICENSED,
        "ai-train": NOT_LICENSED,
        "ai-input": LICENSED,
        "ai-index": LICENSED,
        "search": LICENSED,
    }
    # The URL next to the scope: all licensed.
    assert set(verdicts(doc, "https://example.com/about").values()) == {LICENSED}
    assert set(verdicts(doc, "https://example.com/articles").values()) == {LICENSED}
    answer = evaluate(doc, "https://example.com/articles/x", "ai-train")
    assert answer.content == 2
    assert answer.reason == '<content url="/articles/"> (line 9): <prohibits type="usage">ai-train</prohibits>'
    assert evaluate(doc, "https://example.com/articles/x", "search").content == 1


def test_a_permits_list_licenses_what_it_lists_only():
    # standards.md 2.3 (b).
    doc = document("search-only.xml")
    assert verdicts(doc, "/any") == {
        "all": NOT_LICENSED,
        "ai-all": NOT_LICENSED,
        "ai-train": NOT_LICENSED,
        "ai-input": NOT_LICENSED,
        "ai-index": NOT_LICENSED,
        "search": LICENSED,
    }
    assert "does not list it" in evaluate(doc, "/any", "ai-input").reason


def test_the_collective_example_licenses_nothing_and_names_its_server():
    # standards.md 2.3 (c): prohibits all, with a license server.
    doc = document("collective.xml")
    for token in TOKENS:
        answer = evaluate(doc, "https://example.com/page", token)
        assert answer.verdict == NOT_LICENSED
        assert answer.server == "https://rslcollective.org/api"
        assert "license token is required" in answer.reason


def test_each_group_reads_its_own_license_line():
    # standards.md 2.3 (d), RSL 1.0 4.4.
    body = (FILES / "groups-robots.txt").read_bytes()
    examplebot = robotstxt_licenses(body, "ExampleBot/1.0 (+https://example.com/bot)")
    assert [(link.url, link.line) for link in examplebot] == [("https://example.com/examplebot-license.xml", 3)]
    for agent in ("OtherBot", "*", "ExampleBotter"):
        assert [link.url for link in robotstxt_licenses(body, agent)] == ["https://example.com/default-license.xml"]
    # A global line is ignored by groups that have their own.
    with_global = "License: https://example.com/global.xml\n" + body.decode()
    assert [link.url for link in robotstxt_licenses(with_global, "ExampleBot")] == [
        "https://example.com/examplebot-license.xml"
    ]
    assert [link.url for link in robotstxt_licenses(with_global, "OtherBot")] == [
        "https://example.com/default-license.xml"
    ]


def test_the_guides_global_license_line_applies_to_every_crawler():
    # standards.md 2.3 (e): /guide/robots-txt's example; no group has a License line.
    body = (FILES / "guide-robots.txt").read_bytes()
    for agent in ("Googlebot", "OtherBot"):
        (link,) = robotstxt_licenses(body, agent)
        assert (link.url, link.source, link.line, link.text) == (
            "https://your-website.com/license.xml",
            ROBOTSTXT,
            1,
            "License: https://your-website.com/license.xml",
        )


def test_the_documents_model_and_a_paid_license_beside_a_free_one():
    doc = document("crawl-payment.xml")
    assert doc.ok and doc.max_age == 7 and doc.warnings == ()
    first = doc.contents[0]
    assert first.lastmod == "2025-12-10T00:00:00Z"
    assert first.licenses[0].permits == {"usage": frozenset({"search", "ai-index"})}
    paid = first.licenses[1]
    assert paid.permits["user"] == frozenset({"non-commercial", "education"})
    assert paid.prohibits == {"geo": frozenset({"EU"})}
    assert (paid.payment.type, paid.payment.amounts) == ("crawl", ("0.015 USD",))
    assert verdicts(doc, "https://example.com/a") == {
        # Each license is an offer on its own: no one of them covers all, or ai-all.
        "all": NOT_LICENSED,
        "ai-all": NOT_LICENSED,
        "ai-train": LICENSE_REQUIRED,
        "ai-input": LICENSE_REQUIRED,
        "ai-index": LICENSED,
        "search": LICENSED,
    }
    train = evaluate(doc, "https://example.com/a", "ai-train")
    assert train.payment == "payment crawl (0.015 USD)"
    assert train.conditions == (
        '<permits type="user">education non-commercial</permits>',
        '<prohibits type="geo">EU</prohibits>',
    )
    # A license server: a free use becomes "license required"; the content next to it does not.
    premium = evaluate(doc, "https://example.com/premium/x", "ai-train")
    assert (premium.verdict, premium.server, premium.content) == (
        LICENSE_REQUIRED,
        "https://license.example.com/api",
        2,
    )
    assert doc.contents[1].encrypted is True
    assert evaluate(doc, "https://example.com/premiums", "ai-train").server is None
    # A full URL content: its host, its path, "$".
    pdf = evaluate(doc, "https://example.com/docs/a.pdf", "ai-input")
    assert (pdf.verdict, pdf.content, pdf.conditions) == (NOT_LICENSED, 3, ("payment attribution",))
    assert evaluate(doc, "https://example.com/docs/a.pdf?x=1", "ai-input").content == 1
    assert evaluate(doc, "https://other.example/docs/a.pdf", "ai-input").content == 1


def test_the_getting_started_guide_is_not_well_formed_xml():
    # standards.md 2.2: its url=”/” with curly quotes.
    doc = document("getting-started.xml")
    assert doc.error.kind == NOT_XML
    assert "not well-formed" in doc.error.message
    answer = evaluate(doc, "https://example.com/", "ai-train")
    assert answer.verdict == UNSTATED and "no usable RSL document" in answer.reason


def test_the_guides_aipref_vocabulary_grants_nothing_and_prohibits_what_it_meant():
    doc = document("guide-vocabulary.xml")
    site, news = doc.contents
    # "train-ai" in a permits list grants nothing; "royalty" is read as a payment due.
    assert site.licenses[0].permits == {"usage": frozenset({"search"})}
    assert site.licenses[0].problems == (
        "<permits> 'train-ai' is not an RSL 1.0 usage token: it grants and prohibits nothing",
        "payment type 'royalty' is not RSL 1.0's: read as a payment due",
    )
    assert evaluate(doc, "/about", "ai-train").verdict == NOT_LICENSED
    assert evaluate(doc, "/about", "search").verdict == LICENSE_REQUIRED
    # In a prohibits list it is read as RSL's ai-train, and said.
    assert news.licenses[0].prohibits == {"usage": frozenset({"ai-train"})}
    assert news.licenses[0].problems == ("<prohibits> 'train-ai' is not an RSL 1.0 usage token: read as 'ai-train'",)
    answer = evaluate(doc, "/news/today", "ai-train")
    assert (answer.verdict, answer.content) == (NOT_LICENSED, 2)
    assert answer.problems == news.licenses[0].problems


# -- tokens and purposes -----------------------------------------------------------------


def test_the_usage_tokens_nest():
    assert {token for token in TOKENS if covers("all", token)} == set(TOKENS)
    assert {token for token in TOKENS if covers("ai-all", token)} == {"ai-all", "ai-train", "ai-input", "ai-index"}
    assert {token for token in TOKENS if covers("search", token)} == {"search"}
    assert not covers("ai-train", "ai-all")
    assert set(USAGE_PARENTS) == set(TOKENS)


@pytest.mark.parametrize(
    ("permits", "prohibits", "expected"),
    [
        ("ai-all", "", {"all": NOT_LICENSED, "ai-all": LICENSED, "ai-train": LICENSED, "search": NOT_LICENSED}),
        ("ai-all search", "", {"all": LICENSED, "ai-all": LICENSED, "ai-index": LICENSED, "search": LICENSED}),
        ("", "ai-all", {"all": NOT_LICENSED, "ai-input": NOT_LICENSED, "search": LICENSED}),
        ("", "ai-index", {"ai-all": NOT_LICENSED, "ai-index": NOT_LICENSED, "ai-input": LICENSED}),
        # Permitted and prohibited: not licensed (3.6).
        ("ai-train", "ai-all", {"ai-train": NOT_LICENSED, "ai-input": NOT_LICENSED, "search": NOT_LICENSED}),
        ("all", "all", {"search": NOT_LICENSED}),
    ],
)
def test_permits_and_prohibits_by_the_nesting(permits, prohibits, expected):
    body = (f'<permits type="usage">{permits}</permits>' if permits else "") + (
        f'<prohibits type="usage">{prohibits}</prohibits>' if prohibits else ""
    )
    doc = parse_rsl(rsl(content("/", body)))
    assert {token: evaluate(doc, "/x", token).verdict for token in expected} == expected


def test_every_declared_purpose_maps_to_rsl_tokens():
    assert set(PURPOSE_TOKENS) == set(PURPOSES)
    assert {token for tokens in PURPOSE_TOKENS.values() for token in tokens} == {
        "search",
        "ai-train",
        "ai-input",
        "ai-index",
    }
    doc = parse_rsl(rsl(content("/", '<prohibits type="usage">ai-index</prohibits>')))
    # ai-use needs ai-input and ai-index; the aliases ROBOTSTXT_USAGE accepts read the same.
    assert purpose_answer(doc, "/x", "ai-use").verdict == NOT_LICENSED
    assert purpose_answer(doc, "/x", "ai-input").verdict == NOT_LICENSED
    assert purpose_answer(doc, "/x", "ai-use").token == "ai-index"
    for purpose in ("search", "train-ai", "train-genai", "ai-train"):
        assert purpose_answer(doc, "/x", purpose).verdict == LICENSED, purpose
    scope = document("scope.xml")
    assert {purpose: purpose_answer(scope, "/articles/x", purpose).verdict for purpose in PURPOSES} == {
        "search": LICENSED,
        "train-ai": NOT_LICENSED,
        "train-genai": NOT_LICENSED,
        "ai-use": LICENSED,
    }
    with pytest.raises(ValueError):
        purpose_answer(doc, "/x", "bots")
    with pytest.raises(ValueError):
        evaluate(doc, "/x", "train-ai")


def test_offers_equal_scopes_and_silent_contents():
    # Two licenses: the free one wins over the paid one, for what it licenses.
    doc = parse_rsl(
        rsl(
            content(
                "/",
                '<permits type="usage">search</permits><payment type="subscription"/>',
                '<permits type="usage">search</permits>',
            )
        )
    )
    assert evaluate(doc, "/x", "search").verdict == LICENSED
    # Two contents of one rank that disagree: the most restrictive.
    doc = parse_rsl(
        rsl(
            content("/a/", '<permits type="usage">all</permits>'),
            content("/a/", '<prohibits type="usage">search</prohibits>'),
        )
    )
    assert evaluate(doc, "/a/x", "search").verdict == NOT_LICENSED
    assert evaluate(doc, "/a/x", "ai-train").verdict == LICENSED
    # A narrow content with no license: nothing restricted there.
    doc = parse_rsl(rsl(content("/", '<prohibits type="usage">all</prohibits>'), content("/open/")))
    assert evaluate(doc, "/open/x", "ai-train").verdict == NOT_LICENSED  # the narrow one is silent on it
    assert evaluate(doc, "/opened", "ai-train").verdict == NOT_LICENSED
    doc = parse_rsl(rsl(content("/open/")))
    assert evaluate(doc, "/open/x", "ai-train").verdict == LICENSED
    assert evaluate(doc, "/opened", "ai-train").verdict == UNSTATED


# -- patterns: the URL that matches, and the one next to it ------------------------------


@pytest.mark.parametrize(
    ("pattern", "matches", "next_to_it"),
    [
        ("/", "/", None),
        ("/articles/", "/articles/2025/x", "/article/x"),
        ("/articles", "/articles-old", "/Articles"),  # a prefix, case-sensitive
        ("/*.pdf", "/docs/a.pdf?download=1", "/docs/a.PDF"),
        ("/*.pdf$", "/docs/a.pdf", "/docs/a.pdf?download=1"),
        ("/a/*/c", "/a/b/c/d", "/a/c"),
        ("*/print", "/news/print", "/news/prin"),
        ("/caf%C3%A9/", "/café/menu", "/cafe/menu"),  # percent-encoding equivalence
        ("/a%2A", "/a*", "/ab"),  # %2A is a literal "*"
        ("https://example.com/news/", "https://example.com/news/x", "https://example.com/new/x"),
        ("https://EXAMPLE.com:443/news/", "http://example.com/news/x", "https://example.org/news/x"),
        ("https://*.example.com/", "https://www.example.com/x", "https://example.com/x"),
        ("articles/", "/articles/x", "/x/articles/"),  # a relative url read from "/"
    ],
)
def test_content_patterns(pattern, matches, next_to_it):
    doc = parse_rsl(rsl(content(pattern, '<prohibits type="usage">all</prohibits>')))
    assert evaluate(doc, matches, "search").verdict == NOT_LICENSED
    if next_to_it is not None:
        assert evaluate(doc, next_to_it, "search").verdict == UNSTATED


def test_the_most_specific_content_wins_whatever_the_order():
    narrow_last = [
        content("/", '<permits type="usage">all</permits>'),
        content("/a/b/", '<prohibits type="usage">all</prohibits>'),
    ]
    for contents in (narrow_last, narrow_last[::-1]):
        doc = parse_rsl(rsl(*contents))
        assert evaluate(doc, "/a/b/c", "search").verdict == NOT_LICENSED
        assert evaluate(doc, "/a/bc", "search").verdict == LICENSED
    # "$" and "*" rank by length, as robots.txt rules do.
    doc = parse_rsl(
        rsl(
            content("/*.html", '<prohibits type="usage">all</prohibits>'),
            content("/a/", '<permits type="usage">all</permits>'),
        )
    )
    assert evaluate(doc, "/a/x.html", "search").verdict == NOT_LICENSED  # "/*.html" is longer than "/a/"
    assert evaluate(doc, "/a/x.htm", "search").verdict == LICENSED


def test_a_content_without_url_matches_nothing_and_an_empty_one_the_site():
    doc = parse_rsl(rsl('<content><license><prohibits type="usage">all</prohibits></license></content>'))
    assert doc.contents[0].problems == ("no url attribute: the content matches nothing",)
    assert evaluate(doc, "/x", "search").verdict == UNSTATED
    doc = parse_rsl(rsl(content("", '<prohibits type="usage">all</prohibits>')))
    assert evaluate(doc, "/x", "search").verdict == NOT_LICENSED


# -- hostile and broken documents ----------------------------------------------------------


def test_entities_are_refused_not_expanded():
    for name in ("billion-laughs.xml", "external-entity.xml"):
        started = time.perf_counter()
        doc = document(name)
        assert time.perf_counter() - started < 0.5
        assert doc.error.kind == DOCTYPE, name
        assert "DOCTYPE at line 2" in doc.error.message
        assert doc.contents == ()


@pytest.mark.parametrize(
    ("body", "kind", "says"),
    [
        (b"", EMPTY, "empty"),
        (b"  \n", EMPTY, "empty"),
        (b"<!DOCTYPE html><html><head><title>Not found</title></head></html>", HTML_PAGE, "HTML page"),
        (b"<html><body>License</body></html>", HTML_PAGE, "HTML page"),
        (b'<rsl xmlns="https://rslstandard.org/rsl"><content url="/">', NOT_XML, "not well-formed"),
        (b'{"rsl": true}', NOT_XML, "not well-formed"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", NOT_XML, "not well-formed"),
        (b'<?xml version="1.0" encoding="x-no-such"?><rsl/>', NOT_XML, "XML"),
        (b'<rsl xmlns="https://example.com/other"><content url="/"/></rsl>', NOT_RSL, "https://example.com/other rsl"),
        (b"<license/>", NOT_RSL, "<license>"),
    ],
)
def test_an_unusable_document_is_an_error_not_an_exception(body, kind, says):
    doc = parse_rsl(body)
    assert doc.error.kind == kind and says in doc.error.message
    assert evaluate(doc, "/x", "search").verdict == UNSTATED


def test_an_rss_feed_is_not_read_yet():
    doc = document("feed.xml")
    assert doc.error.kind == NOT_RSL and "<rss>" in doc.error.message


def test_the_size_bound():
    filler = b"<!-- " + b"x" * 1000 + b" -->\n"
    head = rsl(content("/", '<prohibits type="usage">all</prohibits>'))
    under = head + filler * ((MAX_BYTES - len(head)) // len(filler))
    assert len(under) <= MAX_BYTES
    assert parse_rsl(under).ok
    over = under + b" " * (MAX_BYTES - len(under) + 1)
    assert len(over) == MAX_BYTES + 1
    assert parse_rsl(over).error.kind == TOO_LARGE
    assert "512,001 bytes, over the 512,000 read" in parse_rsl(over).error.message
    assert parse_rsl(under, max_bytes=1000).error.kind == TOO_LARGE


def test_deep_nesting_and_many_contents_are_bounded_work():
    deep = b'<rsl xmlns="https://rslstandard.org/rsl">' + b"<x>" * 50_000 + b"</x>" * 50_000 + b"</rsl>"
    doc = parse_rsl(deep)
    assert doc.ok and doc.contents == ()
    many = rsl(*(content(f"/s{n}/", '<prohibits type="usage">ai-train</prohibits>') for n in range(2000)))
    started = time.perf_counter()
    doc = parse_rsl(many)
    assert len(doc.contents) == 2000
    assert evaluate(doc, "/s1999/x", "ai-train").content == 2000
    assert time.perf_counter() - started < 5


def test_encodings_namespaces_and_lenient_readings():
    body = rsl(content("/", '<prohibits type="usage">ai-train</prohibits>'))
    utf16 = '<?xml version="1.0" encoding="UTF-16"?>'.encode("utf-16") + body.decode().encode("utf-16-le")
    assert evaluate(parse_rsl(utf16), "/x", "ai-train").verdict == NOT_LICENSED
    assert parse_rsl(b"\xef\xbb\xbf" + body).ok
    # No namespace: read, and said; prefixed: read.
    bare = parse_rsl(
        b'<rsl><content url="/"><license><prohibits type="usage">all</prohibits></license></content></rsl>'
    )
    assert bare.warnings == ('<rsl> without xmlns="https://rslstandard.org/rsl": read as RSL',)
    assert evaluate(bare, "/x", "search").verdict == NOT_LICENSED
    prefixed = parse_rsl(
        b'<r:rsl xmlns:r="https://rslstandard.org/rsl"><r:content url="/"><r:license>'
        b'<r:prohibits type="usage">all</r:prohibits></r:license></r:content></r:rsl>'
    )
    assert prefixed.warnings == () and evaluate(prefixed, "/x", "search").verdict == NOT_LICENSED
    # RSL 0.9's commas, unknown elements, a foreign namespace, a bad max-age.
    doc = parse_rsl(
        b'<rsl xmlns="https://rslstandard.org/rsl" xmlns:f="https://example.com/f" max-age="soon">'
        b'<content url="/"><license><permits type="usage">search,ai-index</permits>'
        b'<permits type="colour">red</permits></license></content><f:x/><novelty/></rsl>'
    )
    assert doc.contents[0].licenses[0].permits == {"usage": frozenset({"search", "ai-index"})}
    assert "commas (RSL 0.9)" in doc.contents[0].licenses[0].problems[0]
    assert "not usage, user or geo: ignored" in doc.contents[0].licenses[0].problems[1]
    assert doc.max_age is None
    assert doc.warnings == (
        "max-age='soon' is not a number of days: the default, 30, applies",
        "unknown element <novelty> under <rsl> (line 1): ignored",
    )
    assert parse_rsl(rsl()).warnings == ("no <content> element: the document licenses nothing",)


# -- discovery -----------------------------------------------------------------------------


def test_robotstxt_license_lines_relative_and_repeated():
    text = "User-agent: *\nLicense: /license.xml\nLicense: https://example.com/more.xml\nDisallow: /x\n"
    assert [link.url for link in robotstxt_licenses(text)] == ["https://example.com/more.xml"]
    links = robotstxt_licenses(text, base="https://example.com/robots.txt")
    assert [(link.url, link.line) for link in links] == [
        ("https://example.com/license.xml", 2),
        ("https://example.com/more.xml", 3),
    ]
    assert links[0].note == "'/license.xml' is not an absolute URL: read as https://example.com/license.xml"
    # Bytes with a BOM, CRLF, a comment, another spelling of the key.
    body = b"\xef\xbb\xbfLICENSE : https://example.com/l.xml # terms\r\nUser-agent: *\r\nDisallow:\r\n"
    assert [link.url for link in robotstxt_licenses(body, "AnyBot")] == ["https://example.com/l.xml"]
    assert robotstxt_licenses("User-agent: *\nDisallow: /\n") == ()


def test_the_link_header():
    value = (
        '<https://creativecommons.org/licenses/by/4.0/>; rel="license", '
        '<https://example.com/license.xml>; rel="license"; type="application/rsl+xml", '
        '</rel.xml>; type="application/rsl+xml"; rel="alternate LICENSE", '
        "<https://example.com/style.css>; rel=stylesheet"
    )
    for headers in (Headers({"Link": value}), {"link": [value.encode()]}):
        links = header_licenses(headers, base="https://example.com/page")
        assert [(link.url, link.source) for link in links] == [
            ("https://example.com/license.xml", LINK_HEADER),
            ("https://example.com/rel.xml", LINK_HEADER),
        ]
    assert header_licenses({"Link": value})[1:] == ()  # no base: the relative one is dropped
    two_fields = Headers()
    two_fields.appendlist("Link", '<https://a.example/1.xml>; rel=license; type="application/rsl+xml"')
    two_fields.appendlist("Link", '<https://a.example/2.xml>; rel="license"; type=application/rsl+xml')
    assert [link.url for link in header_licenses(two_fields)] == ["https://a.example/1.xml", "https://a.example/2.xml"]
    for garbled in (
        "",
        "not a link",
        "<unterminated; rel=license",
        '<https://x>; rel="license; type=application/rsl+xml',
    ):
        assert header_licenses({"Link": garbled}) == ()
    assert header_licenses({}) == ()


def test_the_pages_link_element():
    links = page_licenses((FILES / "page.html").read_bytes(), base="https://example.com/articles/1")
    assert [(link.url, link.source) for link in links] == [
        ("https://example.com/license.xml", PAGE),
        ("https://cdn.example.net/rsl.xml", PAGE),
    ]
    assert links[0].text == '<link rel="license" type="application/rsl+xml" href="/license.xml">'
    assert page_licenses(b"%PDF-1.7 binary") == ()


# -- lint --------------------------------------------------------------------------------


def findings(text: str) -> list[tuple[int, str]]:
    return [(finding.line, finding.code) for finding in lint_robotstxt(text)]


def test_lint_knows_the_license_line():
    for name in ("guide-robots.txt", "groups-robots.txt"):
        assert lint_robotstxt((FILES / name).read_bytes()) == [], name
    text = (
        "License: /license.xml\n"
        "License: https://example.com/second.xml\n"
        "User-agent: ExampleBot\n"
        "License: https://example.com/bot.xml\n"
        "Disallow: /x\n"
        "License: license.xml\n"
        "User-agent: *\n"
        "License: https://example.com/all.xml\n"
        "Licence: https://example.com/all.xml\n"
    )
    assert findings(text) == [
        (1, RELATIVE_LICENSE),
        (2, SEVERAL_LICENSES),
        (6, RELATIVE_LICENSE),
        (6, SEVERAL_LICENSES),
        (9, UNKNOWN_DIRECTIVE),
    ]
    by_line = {finding.line: str(finding) for finding in lint_robotstxt(text)}
    assert "the first is line 4" in [str(f) for f in lint_robotstxt(text) if f.line == 6][1]
    assert by_line[9] == "line 9: unknown directive 'Licence' (did you mean License?): no parser reads this line"


# -- layout --------------------------------------------------------------------------------


def test_rsl_is_pure_and_low():
    # rsl/ sits with tdmrep/ and usage/: no Scrapy, nothing from the crawl's folders.
    allowed = tuple(f"scrapy_robots.{name}" for name in ("rsl", "rfc9309", "usage", "utils", "decoding"))
    folder = Path(__file__).parent.parent / "scrapy_robots" / "rsl"
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                assert not name.startswith("scrapy."), (path.name, name)
                if name.startswith("scrapy_robots"):
                    assert name.startswith(allowed), (path.name, name)
