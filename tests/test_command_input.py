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
        f"scrapy robots: error: '{path}' looks like a robots.txt, not a list of URLs "
        f"(line 2: 'User-agent: FooBot'): give a robots.txt with --file PATH"
    )
    assert out.stdout == ""
    piped = robots("--urls", "-", input=ROBOTS.encode())
    assert piped.returncode == 2
    assert piped.stderr.startswith("scrapy robots: error: standard input looks like a robots.txt")


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
