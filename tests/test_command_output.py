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
