"""`scrapy robots --page` (issue #33): the real command, as a subprocess, fetches each page
robots.txt allows through its crawl and shows the page's robots directives for this
crawler. The sites are Twisted servers (tests/servers.py); the command runs in a thread,
so the test's reactor keeps serving them while it waits. Every fetch is counted at the
server."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest_twisted
from servers import body, redirect, reset
from test_directives_crawl import anchors, follow, html
from twisted.internet.threads import deferToThread

ROBOTS = body("User-agent: *\nDisallow: /private\n")
MYBOT = "Mozilla/5.0 (compatible; MyBot/1.0; +https://my.example/bot)"
#: A directives object's keys that are no directive (docs/command.rst).
EXTRA = {"token", "obeyed", "other_crawlers", "malformed", "rel_nofollow"}


def _run(cwd, *args: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("SCRAPY_")}
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "robots", *args],
        cwd=cwd,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
    )


async def robots(tmp_path, *args: str) -> subprocess.CompletedProcess[str]:
    """``scrapy robots ARGS`` outside any project, without blocking the servers' reactor."""
    return await deferToThread(_run, tmp_path, *args)


async def answers(tmp_path, *args: str) -> list[dict]:
    out = await robots(tmp_path, "--json", *args)
    assert out.returncode in (0, 1), out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


def page_hits(site, path: str) -> int:
    return sum(1 for hit in site.page_hits() if hit.path == path)


def rows(stdout: str) -> dict[str, list[str]]:
    """The report's rows by label; a row without a label continues the one above."""
    found: dict[str, list[str]] = {}
    label = ""
    for line in stdout.splitlines():
        if not line.startswith("  "):
            continue
        head, text = line[2:15].strip(), line[15:]
        label = head or label
        found.setdefault(label, []).append(text)
    return found


@pytest_twisted.ensureDeferred
async def test_x_robots_tag_scoped_to_this_bot_and_to_another(serve, tmp_path):
    site = serve(
        ROBOTS,
        {"/scoped": html(headers=[("X-Robots-Tag", "mybot: noindex"), ("X-Robots-Tag", "otherbot: nofollow, noai")])},
    )
    url = f"{site.url}/scoped"
    out = await robots(tmp_path, "--page", "--user-agent", MYBOT, url)
    assert out.returncode == 0, out.stderr
    shown = rows(out.stdout)
    assert shown["page"][0].startswith("fetched the page: HTTP 200, text/html, "), out.stdout
    assert shown["directives"] == ["noindex (X-Robots-Tag)"], out.stdout
    assert shown["other bots"] == ["otherbot: nofollow, noai (X-Robots-Tag)"], out.stdout
    # The other crawler reads the other part, and sees this one's as another's.
    [other] = await answers(tmp_path, "--page", "--user-agent", "OtherBot", url)
    directives = other["directives"]
    assert {k: v for k, v in directives.items() if k not in EXTRA} == {
        "nofollow": ["X-Robots-Tag"],
        "noai": ["X-Robots-Tag"],
    }
    assert directives["token"] == "OtherBot"
    assert directives["other_crawlers"] == [{"crawler": "mybot", "directive": "noindex", "source": "X-Robots-Tag"}]
    # One fetch per run, nothing else of the site but robots.txt.
    assert page_hits(site, "/scoped") == 2
    assert {hit.path for hit in site.hits} == {"/robots.txt", "/scoped"}


@pytest_twisted.ensureDeferred
async def test_meta_botname_tag_applies_to_that_bot_only(serve, tmp_path):
    head = (
        '<meta name="robots" content="noarchive">'
        '<meta name="MyBot" content="noindex, nofollow">'
        '<meta name="googlebot" content="nosnippet">'
        '<meta name="viewport" content="width=device-width">'
    )
    site = serve(ROBOTS, {"/meta": html(head)})
    url = f"{site.url}/meta"
    out = await robots(tmp_path, "--page", "--user-agent", MYBOT, url)
    shown = rows(out.stdout)
    assert shown["directives"] == [
        'noindex (meta name="mybot"), nofollow (meta name="mybot"), noarchive (meta name="robots")'
    ], out.stdout
    assert shown["other bots"] == ['googlebot: nosnippet (meta name="googlebot")'], out.stdout
    [other] = await answers(tmp_path, "--page", "--user-agent", "OtherBot", url)
    assert {k: v for k, v in other["directives"].items() if k not in EXTRA} == {"noarchive": ['meta name="robots"']}
    assert [o["crawler"] for o in other["directives"]["other_crawlers"]] == ["mybot", "mybot", "googlebot"]
    assert page_hits(site, "/meta") == 2


@pytest_twisted.ensureDeferred
async def test_robots_tag_structured_list_and_a_malformed_one(serve, tmp_path):
    site = serve(
        ROBOTS,
        {
            "/list": html(headers=[("Robots-Tag", "*;nosnippet, MyBot;noindex, OtherBot;noai")]),
            # A malformed list is ignored as a whole (RFC 9651), said, and the other header still read.
            "/bad": html(headers=[("Robots-Tag", "MyBot;noindex, ("), ("X-Robots-Tag", "noarchive")]),
        },
    )
    out = await robots(tmp_path, "--page", "--user-agent", MYBOT, f"{site.url}/list", f"{site.url}/bad")
    assert out.returncode == 0, out.stderr
    good, bad = out.stdout.split(f"{site.url}/bad: allowed")
    assert rows(good)["directives"] == ["noindex (Robots-Tag), nosnippet (Robots-Tag)"], out.stdout
    assert rows(good)["other bots"] == ["OtherBot: noai (Robots-Tag)"], out.stdout
    assert "malformed" not in rows(good)
    assert rows(bad)["directives"] == ["noarchive (X-Robots-Tag)"], out.stdout
    assert rows(bad)["malformed"] == ["ignored: Robots-Tag: 'MyBot;noindex, (' is not a structured-field list"]
    listed, malformed = await answers(tmp_path, "--page", "--user-agent", MYBOT, f"{site.url}/list", f"{site.url}/bad")
    assert listed["directives"]["malformed"] == []
    assert "noindex" not in malformed["directives"]
    assert malformed["directives"]["malformed"] == ["Robots-Tag: 'MyBot;noindex, (' is not a structured-field list"]
    assert page_hits(site, "/list") == page_hits(site, "/bad") == 2


@pytest_twisted.ensureDeferred
async def test_a_pdf_s_x_robots_tag_is_read_and_its_bytes_are_not_a_head(serve, tmp_path):
    pdf = b'%PDF-1.4\n<meta name="robots" content="nofollow">\n%%EOF\n'

    def document(request):
        request.setHeader(b"Content-Type", b"application/pdf")
        request.setHeader(b"X-Robots-Tag", b"noindex, unavailable_after: 2999-01-01")
        return pdf

    site = serve(ROBOTS, {"/report.pdf": document})
    out = await robots(tmp_path, "--page", f"{site.url}/report.pdf")
    shown = rows(out.stdout)
    assert shown["page"] == [f"fetched the page: HTTP 200, application/pdf, {len(pdf)} bytes"], out.stdout
    assert shown["directives"] == ["noindex (X-Robots-Tag)"], out.stdout
    assert shown["unavailable"] == ["after 2999-01-01 00:00:00 UTC (X-Robots-Tag): not yet past"], out.stdout
    [answer] = await answers(tmp_path, "--page", f"{site.url}/report.pdf")
    assert answer["page"]["content_type"] == "application/pdf"
    assert answer["page"]["size"] == len(pdf)
    assert answer["directives"]["unavailable_after"] == {
        "date": "2999-01-01T00:00:00+00:00",
        "sources": ["X-Robots-Tag"],
        "past": False,
    }
    assert "nofollow" not in answer["directives"]
    assert answer["directives"]["rel_nofollow"] == 0


@pytest_twisted.ensureDeferred
async def test_a_disallowed_url_is_not_fetched_and_the_exit_status_stays_robots_txt_s(serve, tmp_path):
    site = serve(
        ROBOTS,
        {
            "/private/x": html(headers=[("X-Robots-Tag", "noindex")]),
            "/open": html('<meta name="robots" content="none">'),
            # A redirect to a URL robots.txt denies is not followed: the crawl's middleware drops it.
            "/go": redirect("/private/y"),
        },
    )
    out = await robots(tmp_path, "--page", f"{site.url}/private/x", f"{site.url}/open", f"{site.url}/go")
    assert out.returncode == 1, out.stderr  # denied, as without --page
    denied = out.stdout.split(f"{site.url}/open")[0]
    assert rows(denied)["page"] == ["not fetched: robots.txt: denied, the crawl does not fetch it"], out.stdout
    assert "directives" not in rows(denied)
    redirected = out.stdout.split(f"{site.url}/go: allowed")[1]
    assert rows(redirected)["page"][0].startswith("could not fetch the page: IgnoreRequest"), out.stdout
    assert page_hits(site, "/private/x") == 0
    assert page_hits(site, "/private/y") == 0
    assert page_hits(site, "/open") == 1
    assert page_hits(site, "/go") == 1
    # "none" is noindex and nofollow, and the exit status says nothing of it: 0.
    only_open = await robots(tmp_path, "--page", f"{site.url}/open")
    assert only_open.returncode == 0, only_open.stderr
    assert rows(only_open.stdout)["directives"] == ['noindex (meta name="robots"), nofollow (meta name="robots")'], (
        only_open.stdout
    )
    [answer] = await answers(tmp_path, "--page", f"{site.url}/private/x")
    assert answer["page"] == {
        "fetched": False,
        "skipped": "robots.txt: denied, the crawl does not fetch it",
        "error": None,
    }
    assert answer["directives"] is None
    assert page_hits(site, "/private/x") == 0


@pytest_twisted.ensureDeferred
async def test_a_page_that_cannot_be_fetched_is_said_and_changes_no_exit_status(serve, tmp_path):
    site = serve(ROBOTS, {"/reset": reset()})
    out = await robots(tmp_path, "--page", "--brief", f"{site.url}/reset")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"allowed  {site.url}/reset  (no rule matches)  [page: "), out.stdout
    assert page_hits(site, "/reset") >= 1  # Scrapy's retries (RETRY_TIMES) apply, as in a crawl


@pytest_twisted.ensureDeferred
async def test_json_directives_have_the_crawl_s_meta_shape_and_more(serve, tmp_path):
    head = '<meta name="robots" content="noarchive"><meta name="googlebot" content="noindex">'
    links = anchors("/a", "/b", rel="nofollow") + anchors("/b", "/c")
    routes = {
        "/page": html(
            head,
            links,
            headers=[("X-Robots-Tag", "nosnippet, unavailable_after: 2001-09-09"), ("Robots-Tag", "mybot;noai")],
        )
    }
    site = serve(ROBOTS, routes)
    url = f"{site.url}/page"
    [answer] = await answers(tmp_path, "--page", "--user-agent", MYBOT, url)
    directives = answer["directives"]
    # What a crawl with the same User-Agent records in response.meta["robotstxt_directives"].
    crawler = await follow([url], USER_AGENT=MYBOT, ROBOTSTXT_DIRECTIVES_REL_NOFOLLOW=True, DEPTH_LIMIT=1)
    meta = crawler.spider.directives["page"]
    assert meta["noindex"] == ["X-Robots-Tag"]  # unavailable_after is past
    shown = {k: v for k, v in directives.items() if k not in EXTRA}
    past = shown["unavailable_after"].pop("past")
    assert shown == meta
    assert past is True
    assert directives["token"] == "MyBot"
    assert directives["obeyed"] is True
    assert directives["other_crawlers"] == [
        {"crawler": "googlebot", "directive": "noindex", "source": 'meta name="googlebot"'}
    ]
    assert directives["malformed"] == []
    assert directives["rel_nofollow"] == 1  # /a only: /b is linked without rel too
    assert answer["page"] == {
        "fetched": True,
        "skipped": None,
        "error": None,
        "url": url,
        "status": 200,
        "content_type": "text/html",
        "size": answer["page"]["size"],
        "redirects": 0,
    }
    brief = await robots(tmp_path, "--page", "--brief", "--user-agent", MYBOT, url)
    assert brief.stdout == (
        f"allowed  {url}  (no rule matches)  [page 200: noindex, noarchive, nosnippet, noai; 1 rel=nofollow]\n"
    ), brief.stdout


@pytest_twisted.ensureDeferred
async def test_with_file_the_page_still_comes_from_the_network(serve, tmp_path):
    (tmp_path / "robots.txt").write_text("User-agent: *\nDisallow: /local-only\n")
    site = serve(body("User-agent: *\nDisallow: /\n"), {"/x": html(headers=[("X-Robots-Tag", "noindex")])})
    out = await robots(tmp_path, "--file", "robots.txt", "--page", f"{site.url}/x", f"{site.url}/local-only", "/a-path")
    assert out.returncode == 1, out.stderr
    assert rows(out.stdout.split(f"{site.url}/local-only")[0])["directives"] == ["noindex (X-Robots-Tag)"]
    assert "not fetched: a path given with --file names no site" in out.stdout, out.stdout
    # The local file decided; the site's own robots.txt (Disallow: /) was never asked.
    assert site.robots_hits() == 0
    assert [hit.path for hit in site.page_hits()] == ["/x"]


@pytest_twisted.ensureDeferred
async def test_several_agents_each_fetch_with_their_user_agent(serve, tmp_path):
    agents: list[str] = []
    page = html(headers=[("X-Robots-Tag", "otherbot: noindex")])

    def recording(request):
        agents.append(request.getHeader(b"User-Agent").decode())
        return page(request)

    site = serve(ROBOTS, {"/p": recording})
    found = await answers(tmp_path, "--page", "--user-agent", MYBOT, "--user-agent", "OtherBot/2.0", f"{site.url}/p")
    assert sorted(agents) == sorted([MYBOT, "OtherBot/2.0"])
    assert [("noindex" in a["directives"], a["directives"]["token"]) for a in found] == [
        (False, "MyBot"),
        (True, "OtherBot"),
    ]


@pytest_twisted.ensureDeferred
async def test_page_cannot_be_combined_with_compare(tmp_path):
    out = await robots(tmp_path, "--page", "--compare", "https://example.com/")
    assert out.returncode == 2
    assert "--page and --compare cannot be combined" in out.stderr


@pytest_twisted.ensureDeferred
async def test_page_with_usage_answers_as_the_crawl_that_drops_its_items(serve, tmp_path):
    # The crawl fetches each page and drops the items of those whose noai, tdm-reservation
    # header or tdm-reservation meta tag denies train-ai; --page --usage says the same.
    site = serve(
        ROBOTS,
        {
            "/noai": html(headers=[("X-Robots-Tag", "noai")]),
            "/reserved": html(headers=[("tdm-reservation", "1")]),
            "/tagged": html('<meta name="tdm-reservation" content="1">'),
            "/plain": html(),
            "/other-bot": html(headers=[("X-Robots-Tag", "otherbot: noai")]),
        },
    )
    paths = ["/noai", "/reserved", "/tagged", "/plain", "/other-bot"]
    args = ["--page", "--usage", "train-ai", "--user-agent", MYBOT, *(site.url + p for p in paths)]
    out = await robots(tmp_path, *args)
    assert out.returncode == 1, out.stdout + out.stderr  # a URL denied for the purpose
    assert "come from the site's files alone" not in out.stderr  # --page reads the page too
    found = await answers(tmp_path, *args)
    by_path = {answer["url"][len(site.url) :]: answer for answer in found}
    assert {p for p, a in by_path.items() if not a["allowed"]} == {"/noai", "/reserved", "/tagged"}, by_path
    assert by_path["/noai"]["items_dropped"]["by"] == "X-Robots-Tag: noai"
    assert by_path["/reserved"]["items_dropped"]["purpose"] == "train-ai"
    assert by_path["/plain"]["items_dropped"] is None and by_path["/other-bot"]["items_dropped"] is None
    # The one answer (scrapy_robots.grounds): the stat a crawl counts the drop under, and the
    # page's own source, deciding, beside robots.txt's, which allowed the fetch.
    for path, source in (("/noai", "directive"), ("/reserved", "tdm header"), ("/tagged", "tdm meta")):
        answer = by_path[path]
        assert answer["stat"] == "robotstxt/usage/items_dropped/train-ai", answer
        [deciding] = [s for s in answer["sources"] if s["decides"]]
        assert (deciding["name"], deciding["allowed"], deciding["sha256"]) == (source, False, None), answer["sources"]
        assert answer["sources"][0]["name"] == "robots.txt" and answer["sources"][0]["allowed"], answer["sources"]
    assert not any(s["decides"] for s in by_path["/plain"]["sources"][1:]) and by_path["/plain"]["stat"] is None
    assert "dropped by a crawl: X-Robots-Tag: noai denies train-ai" in out.stdout, out.stdout
    # Each page was fetched (the crawl fetches them too), once per command.
    assert all(page_hits(site, p) == 2 for p in paths), [(p, page_hits(site, p)) for p in paths]


@pytest_twisted.ensureDeferred
async def test_brief_page_usage_names_the_header_or_directive_that_denied(serve, tmp_path):
    # Issue #48: robots.txt's Allow line let the page in; the page's own header, X-Robots-Tag
    # or meta tag denied the purpose, and the brief line says which, as the crawl would.
    site = serve(
        body("User-agent: *\nAllow: /\n"),
        {
            "/header": html(headers=[("Content-Usage", "train-ai=n")]),
            "/noai": html(headers=[("X-Robots-Tag", "noai")]),
            "/meta": html('<meta name="robots" content="noai">'),
            "/plain": html(),
        },
    )
    paths = ["/header", "/noai", "/meta", "/plain"]
    out = await robots(tmp_path, "--brief", "--page", "--usage", "train-ai", *(site.url + p for p in paths))
    assert out.returncode == 1, out.stdout + out.stderr
    lines = dict(zip(paths, out.stdout.splitlines()))
    assert "Content-Usage: train-ai=n denies train-ai" in lines["/header"], out.stdout
    assert "X-Robots-Tag: noai denies train-ai" in lines["/noai"], out.stdout
    assert 'meta name="robots": noai denies train-ai' in lines["/meta"], out.stdout
    for path in ("/header", "/noai", "/meta"):
        assert lines[path].startswith("denied ") and "Allow: /" not in lines[path], out.stdout
    assert lines["/plain"].startswith("allowed ") and "line 2: Allow: /" in lines["/plain"], out.stdout
