"""`scrapy robots` and what the user typed (issue #20): URLs, paths, files and options
that are not what the command takes are refused in words that say what to give instead;
messages name the file, the option and the parser the user gave. The real command, run
as a subprocess."""

from __future__ import annotations

import pytest
from test_command import ROBOTS, _json, robots, site  # noqa: F401 - fixtures

# -- URLs (#20 item 6) ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (
            "relative",
            "'relative' is not an absolute http(s) URL: a path needs --file PATH (the robots.txt to check it "
            "against), a URL its scheme and host (https://HOST/PATH)",
        ),
        (
            "/some/path",
            "'/some/path' is not an absolute http(s) URL: a path needs --file PATH (the robots.txt to check it "
            "against), a URL its scheme and host (https://HOST/PATH)",
        ),
        ("mailto:a@b.c", "'mailto:a@b.c' is not a web (http/https) URL: robots.txt speaks only of those"),
        ("ftp://example.com/x", "'ftp://example.com/x' is not a web (http/https) URL: robots.txt speaks only of those"),
        (
            "example.com/page",
            "'example.com/page' is not an absolute http(s) URL (did you mean 'https://example.com/page'?)",
        ),
        (
            "localhost:8080/x",
            "'localhost:8080/x' is not an absolute http(s) URL (did you mean 'https://localhost:8080/x'?)",
        ),
        ("User-agent: *", "'User-agent: *' is a robots.txt line, not a URL: give a robots.txt with --file PATH"),
        ("https:/example.com/x", "'https:/example.com/x' has no host name (an http(s) URL is https://HOST/PATH)"),
    ],
)
def test_a_url_that_is_not_one_gets_the_right_hint(robots, given, message):
    out = robots(given)
    assert out.returncode == 2
    assert out.stderr.strip() == f"scrapy robots: error: {message}"
    assert "https://https" not in out.stderr and "https://mailto" not in out.stderr


def test_with_file_a_path_starts_with_a_slash(robots, tmp_path):
    path = tmp_path / "robots.txt"
    path.write_text(ROBOTS)
    out = robots("--file", str(path), "private/x")
    assert out.returncode == 2
    assert out.stderr.strip() == (
        "scrapy robots: error: 'private/x' is not an absolute http(s) URL or a path: "
        "with --file a path starts with '/' (did you mean '/private/x'?)"
    )


def test_a_local_file_given_as_a_url_is_named(robots, tmp_path):
    (tmp_path / "robots.txt").write_text(ROBOTS)
    out = robots("robots.txt")
    assert out.returncode == 2
    assert out.stderr.strip() == (
        "scrapy robots: error: 'robots.txt' is a local file, not a URL: check a robots.txt with "
        "--file robots.txt, the URLs listed in a file with --urls robots.txt"
    )


def test_a_robotstxt_given_to_urls_is_refused_as_one(robots, tmp_path):
    path = tmp_path / "robots.txt"
    path.write_text("# my site\n" + ROBOTS)
    out = robots("--urls", str(path))
    assert out.returncode == 2
    assert out.stderr.strip() == (
        f"scrapy robots: error: --urls '{path}' looks like a robots.txt, not a list of URLs "
        f"(line 2: 'User-agent: FooBot'): give a robots.txt with --file PATH"
    )
    assert out.stdout == ""
    piped = robots("--urls", "-", input=ROBOTS.encode())
    assert piped.returncode == 2
    assert piped.stderr.startswith("scrapy robots: error: --urls - (standard input) looks like a robots.txt")


def test_a_host_with_whitespace_is_refused_before_any_fetch(site, robots):
    s = site(ROBOTS)
    host = s.url.split("://")[1]
    out = robots("--json", "http://exa mple.com/", f"http://{host} /x", f"{s.url}/private/x")
    assert out.returncode == 2
    answers = _json(out.stdout)
    assert [a["error"] for a in answers] == [
        "'http://exa mple.com/' is not a valid URL: a host name cannot hold ' '",
        f"'http://{host} /x' is not a valid URL: a host name cannot hold ' '",
        None,
    ]
    assert answers[2]["allowed"] is False
    assert "unreachable" not in out.stderr and "Invalid URI" not in out.stderr
    assert s.hits == ["/robots.txt"]


# -- options (#20 item 6) --------------------------------------------------------------------


@pytest.mark.parametrize(("option", "hint"), [("--briefly", " (did you mean --brief?)"), ("-x", "")])
def test_a_mistyped_option_is_a_usage_error_not_a_url(robots, option, hint):
    out = robots(option, "https://example.com/")
    assert out.returncode == 2
    assert out.stdout == ""
    # argparse's usage error, in Scrapy's words: the syntax, then the error.
    assert "scrapy robots [options] [URL ...]" in out.stderr
    assert out.stderr.strip().splitlines()[-1].endswith(f"error: unrecognized arguments: {option}{hint}")
    assert "https://-" not in out.stderr


# -- --file: the log names the file and the user's parser (#20 item 8) ---------------------

HTML = "<html><head><title>Not found</title></head><body>Sorry</body></html>\n"


def test_file_warnings_name_the_file_not_a_made_up_site(robots, tmp_path):
    path = tmp_path / "robots.txt"
    path.write_text(HTML)
    out = robots("--file", str(path), "--brief", "/x")
    assert out.returncode == 0, out.stderr
    [warning] = out.stderr.strip().splitlines()
    assert f"WARNING: robots.txt in '{path}' (--file): HTTP 200 -> parse" in warning
    assert "an HTML page, not a robots.txt" in warning
    assert "example.com" not in out.stderr
    piped = robots("--file", "-", "--brief", "/x", "-s", "ROBOTSTXT_MAXSIZE=20", input=ROBOTS.encode())
    assert "WARNING: robots.txt from standard input (--file -): HTTP 200 -> parse, " in piped.stderr
    assert "cut at ROBOTSTXT_MAXSIZE (20 bytes)" in piped.stderr
    assert "example.com" not in piped.stderr
    # A URL of a real site, checked against the file: the file, for that site.
    site_url = robots("--file", str(path), "--brief", "https://foo.test/x")
    assert f"WARNING: robots.txt in '{path}' (--file) for https://foo.test:443: HTTP 200" in site_url.stderr


@pytest.mark.parametrize(("parser", "name"), [(None, "RFC9309Parser"), ("protego", "ProtegoParser")])
def test_the_log_names_the_users_parser(robots, tmp_path, parser, name):
    path = tmp_path / "robots.txt"
    path.write_text(ROBOTS)
    chosen = ["--parser", parser] if parser else []
    out = robots("--file", str(path), "-L", "INFO", *chosen, "/private/x")
    assert out.returncode == 1, out.stderr
    [line] = [line for line in out.stderr.splitlines() if "HTTP 200 -> parse" in line]
    assert f", parser {name}, crawl-delay 2s" in line
    assert "parser RecordingParser" not in out.stderr


# -- --brief --compare (#20 item 9) ----------------------------------------------------------


def test_brief_and_compare_are_refused_together(robots, tmp_path):
    path = tmp_path / "robots.txt"
    path.write_text(ROBOTS)
    out = robots("--file", str(path), "--brief", "--compare", "/private/x")
    assert out.returncode == 2
    assert out.stdout == ""
    message = (
        "error: --brief and --compare cannot be combined: --brief prints one line per URL, --compare a table "
        "of every parser's answers; give one of them"
    )
    assert out.stderr.strip().splitlines()[-1].endswith(message)
    # One line, as every other error of the command: not Scrapy's usage block above it.
    assert out.stderr == f"scrapy robots: {message}\n", out.stderr


# -- errors name what the user typed (#20 item 11) ----------------------------------------

SHORT_NAMES = "rfc9309, protego, python, rerp, reppy, google"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--parser", "nonexistent"],
            f"--parser 'nonexistent': no parser has that short name; give a short name ({SHORT_NAMES}) or the "
            "import path of a parser class such as 'scrapy_robots.parsers.ProtegoParser'",
        ),
        (
            ["--parser", "nope.Nothing"],
            "--parser 'nope.Nothing' cannot be loaded (No module named 'nope'); give a short name "
            f"({SHORT_NAMES}) or the import path of a parser class such as 'scrapy_robots.parsers.ProtegoParser'",
        ),
        (
            ["--parser", "urllib.robotparser.RobotFileParser"],
            "--parser urllib.robotparser.RobotFileParser has no allowed(url, user_agent) method: it cannot answer.",
        ),
        (
            ["--usage", "bogus"],
            "--usage 'bogus': unknown purpose; known purposes: search, train-ai, train-genai, ai-use, ai-train, "
            "ai-input",
        ),
        (
            ["--usage", "search,bogus"],
            "--usage 'search,bogus': unknown purpose 'bogus'; known purposes: search, train-ai",
        ),
        (
            ["-s", "ROBOTSTXT_PARSER=protego"],
            "ROBOTSTXT_PARSER = 'protego' cannot be loaded: short names such as 'protego' are taken by "
            "`scrapy robots --parser`; ROBOTSTXT_PARSER takes an import path such as "
            "'scrapy_robots.parsers.ProtegoParser'",
        ),
    ],
)
def test_errors_name_the_option_the_user_gave(robots, args, message):
    out = robots(*args, "https://example.com/")
    assert out.returncode == 2
    [line] = out.stderr.strip().splitlines()
    assert line.startswith(f"scrapy robots: error: {message}"), line
    if args[0] != "-s":
        assert "ROBOTSTXT_PARSER" not in line and "ROBOTSTXT_USAGE" not in line


def test_a_crawl_with_a_short_name_in_robotstxt_parser_is_told_the_import_path():
    from crawling import BASE_SETTINGS
    from scrapy.utils.test import get_crawler

    from scrapy_robots import RobotsTxtMiddleware

    for value, path in (
        ("rfc9309", "scrapy_robots.parsers.RFC9309Parser"),
        ("Google", "scrapy_robots.parsers.GoogleParser"),
    ):
        # Without the backoff extension, which reads the same configuration and would fail first.
        crawler = get_crawler(settings_dict={**BASE_SETTINGS, "EXTENSIONS": {}, "ROBOTSTXT_PARSER": value})
        with pytest.raises(ValueError) as raised:
            RobotsTxtMiddleware.from_crawler(crawler)
        assert str(raised.value) == (
            f"ROBOTSTXT_PARSER = {value!r} cannot be loaded: short names such as {value!r} are taken by "
            f"`scrapy robots --parser`; ROBOTSTXT_PARSER takes an import path such as {path!r}"
        )


# -- what the user gave, named (#30 item 4) ---------------------------------------------


@pytest.mark.parametrize("agents", [[""], ["  "], ["FooBot", ""]])
def test_an_empty_user_agent_is_a_usage_error_naming_the_option(robots, tmp_path, agents):
    path = tmp_path / "robots.txt"
    path.write_text(ROBOTS)
    given = [arg for agent in agents for arg in ("--user-agent", agent)]
    out = robots("--file", str(path), *given, "/private/x")
    assert out.returncode == 2
    assert out.stdout == ""
    empty = next(agent for agent in agents if not agent.strip())
    assert out.stderr.strip() == (
        f"scrapy robots: error: --user-agent {empty!r}: an agent needs a name (--user-agent FooBot); leave "
        "the option out to ask as the crawl does (ROBOTSTXT_USER_AGENT, else USER_AGENT)"
    )


def _unreadable(tmp_path, kind: str) -> str:
    if kind == "directory":
        return str(tmp_path)
    return str(tmp_path / "none.txt")


@pytest.mark.parametrize(
    ("option", "kind", "message"),
    [
        ("--file", "missing", "--file '{path}': cannot read it (No such file or directory)"),
        ("--file", "directory", "--file '{path}' is a directory: give the path of a robots.txt file"),
        ("--urls", "missing", "--urls '{path}': cannot read it (No such file or directory)"),
        ("--urls", "directory", "--urls '{path}' is a directory: give the path of a file of URLs, one a line"),
    ],
)
@pytest.mark.parametrize("urls", [["/x"], []])
def test_an_unreadable_file_or_urls_names_the_option_and_the_path(robots, tmp_path, option, kind, message, urls):
    path = _unreadable(tmp_path, kind)
    robots_txt = tmp_path / "robots.txt"
    robots_txt.write_text(ROBOTS)
    other = ["--file", str(robots_txt)] if option == "--urls" else []
    out = robots(*other, option, path, *urls)
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.strip() == f"scrapy robots: error: {message.format(path=path)}", out.stderr
