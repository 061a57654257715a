"""`scrapy robots` says the same thing in every output (issue #20): a file cut at
ROBOTSTXT_MAXSIZE, an unreachable site, the usage preferences. The real command, run
as a subprocess, against local files and local sites."""

from __future__ import annotations

from test_command import _json, robots, site  # noqa: F401 - fixtures

# -- a robots.txt cut at ROBOTSTXT_MAXSIZE (item 3) -------------------------------------

FILLER = "# " + "x" * 70 + "\n"  # 73 bytes


def _big_robots(size: int = 716_839) -> tuple[str, int]:
    """A robots.txt of about ``size`` bytes whose last line, past 500 KiB, is a rule;
    and that line's number."""
    body = "User-agent: *\nDisallow: /private\n"
    lines = (size - len(body) - len("Disallow: /after-cap\n")) // len(FILLER)
    body += FILLER * lines + "Disallow: /after-cap\n"
    return body, 3 + lines


def _first_line_not_read(body: str, maxsize: int = 500 * 1024) -> int:
    """The first line the crawl does not read: the cut is at the last line end within the cap."""
    start = body.encode()[:maxsize]
    return start[: start.rfind(b"\n") + 1].count(b"\n") + 1


def test_summary_of_a_cut_file_marks_the_lines_not_read(robots, tmp_path):
    body, last = _big_robots()
    (tmp_path / "robots.txt").write_text(body)
    first = _first_line_not_read(body)
    out = robots("--file", "robots.txt")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "robots.txt: 1 group, 1 rule, 0 sitemaps", out.stdout
    rule = next(line for line in lines if "/after-cap" in line)
    assert rule.split() == [
        "line",
        str(last),
        "Disallow:",
        "/after-cap",
        "(not",
        "read:",
        "past",
        "ROBOTSTXT_MAXSIZE)",
    ]
    assert f"  lines {first}-{last} past ROBOTSTXT_MAXSIZE (500 KiB): not read by the crawl (1 rule)" in lines
    [answer] = _json(robots("--file", "robots.txt", "--json").stdout)
    rules = answer["summary"]["groups"][0]["rules"]
    assert [(r["pattern"], r["read"]) for r in rules] == [("/private", True), ("/after-cap", False)]
    assert answer["summary"]["not_read"] == {
        "maxsize": 500 * 1024,
        "bytes_read": len(body.encode()[: 500 * 1024].rsplit(b"\n", 1)[0]) + 1,
        "from_line": first,
        "to_line": last,
    }
    # With URLs too (--summary), the crawl's summary says the same.
    again = robots("--file", "robots.txt", "--summary", "/after-cap")
    assert again.stdout.splitlines()[1:] == lines[1:], again.stdout
    # A file within the cap has nothing marked.
    (tmp_path / "small.txt").write_text("User-agent: *\nDisallow: /private\n")
    [small] = _json(robots("--file", "small.txt", "--json").stdout)
    assert small["summary"]["not_read"] is None
    assert small["summary"]["groups"][0]["rules"][0]["read"] is True


def test_answers_from_a_cut_file_say_no_rule_was_read_past_the_cap(robots, tmp_path):
    body, _ = _big_robots()
    (tmp_path / "robots.txt").write_text(body)
    brief = robots("--file", "robots.txt", "--brief", "/after-cap", "/private/x")
    assert brief.stdout.splitlines() == [
        "allowed  /after-cap  (no rule in the first 500 KiB read)",
        "denied   /private/x  (line 2: Disallow: /private)",
    ], brief.stdout
    report = robots("--file", "robots.txt", "/after-cap").stdout
    assert (
        "  rule         no rule of the group at line 1 (User-agent: *) matches /after-cap in the first 500 KiB "
        "read (the file is cut at ROBOTSTXT_MAXSIZE)"
    ) in report.splitlines(), report
    assert (
        "(local file), 511,9" in report and "bytes (cut at ROBOTSTXT_MAXSIZE = 500 KiB: the rest is not read)" in report
    )
    [answer] = _json(robots("--file", "robots.txt", "--json", "/after-cap").stdout)
    assert answer["decision"]["explanation"].endswith(
        "matches /after-cap in the first 500 KiB read (the file is cut at ROBOTSTXT_MAXSIZE)"
    )
    assert answer["robots_txt"]["truncated"] is True
    assert answer["robots_txt"]["maxsize"] == 500 * 1024
    # A cap that is no whole number of KiB is given in bytes.
    small = robots("--file", "robots.txt", "--brief", "-s", "ROBOTSTXT_MAXSIZE=1000", "/x")
    assert small.stdout == "allowed  /x  (no rule in the first 1,000 bytes read)\n", small.stdout + small.stderr


def test_a_site_cut_at_the_cap_says_so_in_every_output(site, robots):
    body, _ = _big_robots()
    s = site(body)
    first = _first_line_not_read(body)
    brief = robots("--brief", f"{s.url}/after-cap")
    assert brief.stdout == f"allowed  {s.url}/after-cap  (no rule in the first 500 KiB read)\n", brief.stderr
    summary = robots("--summary", f"{s.url}/after-cap").stdout.splitlines()
    assert summary[0] == f"{s.url}/robots.txt: 1 group, 1 rule, 0 sitemaps"
    assert not any("/after-cap" in line for line in summary)
    # The crawl stopped the download at the cap: how far the file goes is not known.
    assert summary[-1] == (
        f"  lines from {first} on past ROBOTSTXT_MAXSIZE (500 KiB): not downloaded, not read by the crawl"
    ), summary
    [answer] = _json(robots("--summary", "--json", f"{s.url}/after-cap").stdout)
    assert answer["summary"]["not_read"]["from_line"] == first
    assert answer["summary"]["not_read"]["to_line"] is None


# -- an unreachable site: one word in every output (item 7) -----------------------------


def test_an_unreachable_site_has_one_verdict_in_every_output(site, robots):
    down = site({"/robots.txt": (503, "busy", {})})
    up = site("User-agent: *\nDisallow: /private\n")
    url = f"{down.url}/x"
    report = robots(url)
    assert report.returncode == 2
    assert report.stdout.splitlines()[0] == f"{url}: unreachable", report.stdout
    brief = robots("--brief", url, f"{up.url}/private/x", f"{up.url}/ok")
    assert brief.returncode == 2
    assert brief.stdout.splitlines() == [
        f"unreachable  {url}  ({down.url}/robots.txt unreachable: HTTP 503)",
        f"denied       {up.url}/private/x  (line 2: Disallow: /private)",
        f"allowed      {up.url}/ok  (no rule matches)",
    ], brief.stdout
    answers = _json(robots("--json", url, f"{up.url}/private/x", f"{up.url}/ok", "nope").stdout)
    assert [a["verdict"] for a in answers] == ["unreachable", "denied", "allowed", "error"]
    assert answers[0]["allowed"] is False and answers[0]["error"]
    compare = robots("--compare", url)
    assert compare.returncode == 2
    row = next(line for line in compare.stdout.splitlines() if line.startswith(url))
    assert set(row.split()[1:]) == {"unreachable"}, compare.stdout


def test_the_command_promises_no_retry_it_will_not_make(site, robots):
    down = site({"/robots.txt": (503, "busy", {})})
    out = robots(f"{down.url}/x")
    assert out.returncode == 2
    assert "if a request needs it" not in out.stdout + out.stderr, out.stdout + out.stderr
    # Said in the answer, not as a log line beside it (whose level raced with the questions).
    assert (
        "  fetch        HTTP 503 -> unreachable, attempt 1: 1 waiting request(s) ignored; "
        "this one-shot run does not try the site again"
    ) in out.stdout.splitlines(), out.stdout
    assert "waiting request" not in out.stderr, out.stderr
    [answer] = _json(robots("--json", f"{down.url}/x").stdout)
    assert answer["robots_txt"]["said"].startswith(f"robots.txt for {down.url}: HTTP 503 -> unreachable, attempt 1")
    # Neither does the policy row.
    assert "  policy       unreachable: a crawl denies the site's URLs for now and tries again later" in out.stdout


def test_brief_page_on_an_unreachable_site_says_it_in_one_line_and_logs_nothing(site, robots):
    # The site's line was a log line after the answer, WARNING or INFO as a waiting question
    # raced with the fetch: now it is the answer's (JSON robots_txt.said, the report's row).
    down = site({"/robots.txt": (503, "busy", {})})
    url = f"{down.url}/x"
    for _ in range(3):
        out = robots("--brief", "--page", url)
        assert out.returncode == 2
        assert out.stdout == f"unreachable  {url}  ({down.url}/robots.txt unreachable: HTTP 503)  [page not fetched]\n"
        assert out.stderr == "", out.stderr


def test_an_unreachable_site_shows_what_its_retry_after_does(site, robots):
    # Issue #22: the server's Retry-After sets a crawl's next attempt (bounded), or not.
    down = site({"/robots.txt": (503, "busy", {"Retry-After": "120"})})
    url = f"{down.url}/x"
    out = robots(url)
    assert out.returncode == 2
    row = (
        "  retry after  the server asks 120s: a crawl's next attempt is in 120s, as asked, later than the retry "
        "schedule's; the site's requests wait for it only if it comes before the schedule's last attempt"
    )
    assert row in out.stdout.splitlines(), out.stdout
    assert "this one-shot run does not try the site again; a crawl would in 120s (Retry-After)" in out.stdout
    [answer] = _json(robots("--json", url).stdout)
    assert answer["robots_txt"]["retry_after"] == 120
    assert answer["robots_txt"]["next_attempt"] == {"seconds": 120, "by": "Retry-After"}
    bounded = robots(url, "-s", "ROBOTSTXT_UNREACHABLE_RETRY_MAX_DELAY=60")
    assert (
        "  retry after  the server asks 120s: a crawl's next attempt is in 60s, the longest "
        "ROBOTSTXT_UNREACHABLE_RETRY_MAX_DELAY allows; the site's requests wait for it only if it comes before the "
        "schedule's last attempt"
    ) in bounded.stdout.splitlines(), bounded.stdout
    soon = site({"/robots.txt": (429, "slow down", {"Retry-After": "5"})})
    [answer] = _json(robots("--json", f"{soon.url}/x").stdout)
    assert answer["robots_txt"]["next_attempt"] == {"seconds": 30, "by": "schedule"}
    within = robots(f"{soon.url}/x").stdout
    assert (
        "  retry after  the server asks 5s: within the retry schedule, whose next attempt, in 30s, a crawl keeps"
        in within.splitlines()
    ), within
    # Without the header: no row, and the JSON says the schedule's.
    plain = site({"/robots.txt": (503, "busy", {})})
    assert "retry after" not in robots(f"{plain.url}/x").stdout
    [answer] = _json(robots("--json", f"{plain.url}/x").stdout)
    assert answer["robots_txt"]["retry_after"] is None
    assert answer["robots_txt"]["next_attempt"] == {"seconds": 30, "by": "schedule"}


def test_a_malformed_retry_after_is_said_to_be_ignored(site, robots):
    down = site({"/robots.txt": (503, "busy", {"Retry-After": "soon"})})
    out = robots(f"{down.url}/x")
    assert out.returncode == 2
    assert "retry after" not in out.stdout
    assert "Retry-After 'soon' ignored (neither seconds nor an HTTP date)" in out.stdout, out.stdout


def test_a_crawl_still_says_when_it_tries_again():
    from scrapy.http import Response
    from scrapy.settings import Settings

    from scrapy_robots.policyfiles.decision import decide, describe
    from scrapy_robots.settings.config import ONE_SHOT_SETTING, RobotsConfig
    from scrapy_robots.status.result import FetchResult

    url = "https://shop.example/robots.txt"
    result = FetchResult(url, url, Response(url, status=503), site="https://shop.example:443")
    for one_shot, words in ((False, "the site is tried again in 30s if a request needs it"), (True, "one-shot")):
        config = RobotsConfig.from_settings(
            Settings({"ROBOTSTXT_UNREACHABLE_RETRY_TIMES": 0, ONE_SHOT_SETTING: one_shot})
        )
        assert words in describe(decide(result, None, 1000.0, config), result, 1, config)[1]


# -- --usage and the usage lines in --summary (item 10) ---------------------------------

USAGE_ROBOTS = """\
User-agent: FooBot
Content-Usage: train-ai=n
Disallow: /private

User-agent: *
Content-Signal: search=yes
Allow: /
"""


def test_usage_has_a_row_per_purpose_when_the_site_states_nothing(robots, tmp_path):
    (tmp_path / "robots.txt").write_text("User-agent: *\nDisallow: /private\n")
    out = robots("--file", "robots.txt", "--usage", "train-ai,search", "https://example.com/page")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  usage"))
    assert lines[at] == "  usage        train-ai: allowed, not stated (unstated means allowed)", out.stdout
    assert lines[at + 1] == "               search: allowed, not stated (unstated means allowed)", out.stdout
    [answer] = _json(robots("--file", "robots.txt", "--usage", "train-ai", "--json", "https://example.com/x").stdout)
    assert answer["usage"] == {
        "train-ai": {"decision": "allow", "stated": False, "line": None, "text": None, "source": "robots.txt"}
    }


def test_usage_has_a_row_for_a_url_a_rule_denies(robots, tmp_path):
    (tmp_path / "robots.txt").write_text(USAGE_ROBOTS)
    args = ("--file", "robots.txt", "--user-agent", "FooBot", "--usage", "train-ai")
    out = robots(*args, "https://example.com/private/x")
    assert out.returncode == 1, out.stderr
    assert "  reason       Forbidden by robots.txt\n" in out.stdout
    # A URL the rules disallow has no usage preference (attach-05 3.1, docs/usage.rst).
    assert "  usage        train-ai: allowed, not stated (unstated means allowed)\n" in out.stdout, out.stdout
    [answer] = _json(robots(*args, "--json", "https://example.com/private/x").stdout)
    assert answer["usage"]["train-ai"]["stated"] is False


def test_usage_says_once_that_response_headers_are_not_checked(robots, tmp_path):
    (tmp_path / "robots.txt").write_text(USAGE_ROBOTS)
    out = robots("--file", "robots.txt", "--usage", "train-ai", "--brief", "/a", "/b")
    note = (
        "scrapy robots: note: the usage answers (--usage, ROBOTSTXT_USAGE) come from the site's files alone "
        "(robots.txt, and tdmrep.json for an AI purpose): a page's Content-Usage and tdm-reservation headers, "
        "its tdm-reservation meta tag and its noai directive, which a crawl obeys too, are not checked "
        "(the command downloads no page; --page does)"
    )
    assert out.stderr.count(note) == 1, out.stderr
    assert "Content-Usage and tdm-reservation headers" not in robots("--file", "robots.txt", "--brief", "/a").stderr


def test_summary_lists_the_usage_lines(robots, tmp_path):
    # A Content-Signal line before any User-agent is read for every crawler (as the crawl
    # reads it, usage/); a rule there binds none.
    (tmp_path / "robots.txt").write_text("Content-Signal: ai-train=no\nDisallow: /x\n" + USAGE_ROBOTS)
    lines = robots("--file", "robots.txt").stdout.splitlines()
    assert "    line 4    Content-Usage: train-ai=n" in lines, lines
    assert "    line 8    Content-Signal: search=yes" in lines, lines
    assert "  line 1    Content-Signal: ai-train=no  (before any User-agent: read for every crawler)" in lines, lines
    assert "  before any User-agent, for no crawler: lines 2" in lines, lines
    [answer] = _json(robots("--file", "robots.txt", "--json").stdout)
    records = [record for group in answer["summary"]["groups"] for record in group["records"]]
    assert [(r["line"], r["text"]) for r in records] == [
        (4, "Content-Usage: train-ai=n"),
        (8, "Content-Signal: search=yes"),
    ]
    assert [(r["line"], r["text"]) for r in answer["summary"]["file_wide"]] == [(1, "Content-Signal: ai-train=no")]


# -- a site skipped for its Crawl-delay (#30 item 4) -----------------------------------

SLOW = "User-agent: *\nCrawl-delay: 120\nDisallow: /private\n"
SKIP = ("-s", "ROBOTSTXT_CRAWL_DELAY_EXCEEDED=skip")


def test_a_site_skipped_for_its_crawl_delay_says_so_and_applies_no_delay(robots, tmp_path):
    # The crawl ignores every request of the site, /private/x too, before any rule is read.
    path = tmp_path / "robots.txt"
    path.write_text(SLOW)
    brief = robots("--file", str(path), "--brief", *SKIP, "/a", "/private/x")
    assert brief.returncode == 1, brief.stderr
    why = "site skipped: Crawl-delay 120s exceeds ROBOTSTXT_MAX_CRAWL_DELAY (60s)"
    assert brief.stdout.splitlines() == [f"denied   /a  ({why})", f"denied   /private/x  ({why})"], brief.stdout
    [answer] = _json(robots("--file", str(path), "--json", *SKIP, "/a").stdout)
    assert answer["reason"] == "Forbidden by robots.txt: Crawl-delay 120s exceeds ROBOTSTXT_MAX_CRAWL_DELAY (60s)"
    # No delay is applied to a site none of whose requests go.
    assert answer["delay"] == {"asked": 120.0, "applied": None, "clamped": False, "skip": True}
    assert answer["slot_delay"] == 0.0
    report = robots("--file", str(path), *SKIP, "/a").stdout
    assert "above ROBOTSTXT_MAX_CRAWL_DELAY 60s: the site is skipped; slot delay 0s" in report
    # Clamped, the maximum is applied, and the rules decide.
    clamped = robots("--file", str(path), "--brief", "/a", "/private/x")
    assert clamped.stdout.splitlines() == [
        "allowed  /a  (no rule matches)",
        "denied   /private/x  (line 3: Disallow: /private)",
    ]
    [answer] = _json(robots("--file", str(path), "--json", "/a").stdout)
    assert answer["delay"] == {"asked": 120.0, "applied": 60.0, "clamped": True, "skip": False}
