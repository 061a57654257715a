"""`scrapy robots`: the real command, run as a subprocess, against local sites and files.

The sites are stdlib HTTP servers in a thread of the test process: the pytest
reactor does not spin while ``subprocess.run`` waits, so Twisted servers would not answer.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROBOTS = (
    "User-agent: FooBot\n"
    "Disallow: /foo-only\n"
    "\n"
    "User-agent: *\n"
    "Disallow: /private\n"
    "Allow: /private/open\n"
    "Crawl-delay: 2\n"
    "Sitemap: https://example.com/sitemap.xml\n"
)

# Each site on its own loopback address, away from the ones tests/servers.py hands out.
_HOSTS = (f"127.0.0.{n}" for n in itertools.count(200))


class Site:
    """``routes``: path -> (status, body, headers), or "hang" to accept and never answer."""

    def __init__(self, routes: dict[str, object]):
        self.routes = routes
        self.hits: list[str] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.hits.append(self.path)
                route = site.routes.get(self.path, (404, "not found", {}))
                if route == "hang":
                    time.sleep(30)
                    return
                status, body, headers = route  # type: ignore[misc]
                data = body.encode() if isinstance(body, str) else body
                self.send_response(status)
                for name, value in {"Content-Type": "text/plain", **headers}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer((next(_HOSTS), 0), Handler)
        self.server.daemon_threads = True
        host, port = self.server.server_address[:2]
        self.url = f"http://{host}:{port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def site():
    started: list[Site] = []

    def start(routes: dict[str, object] | str) -> Site:
        if isinstance(routes, str):
            routes = {"/robots.txt": (200, routes, {})}
        started.append(Site(routes))
        return started[-1]

    yield start
    for s in started:
        s.server.shutdown()
        s.server.server_close()


@pytest.fixture
def robots(tmp_path):
    """``robots(*args, input=None, cwd=None, env=None)``: run ``scrapy robots`` outside
    any project (``cwd``: inside one); ``env`` adds environment variables."""

    def run(
        *args: str, input: bytes | None = None, cwd: Path | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        environ = {k: v for k, v in os.environ.items() if not k.startswith("SCRAPY_")}
        environ.update(env or {})
        proc = subprocess.run(
            [sys.executable, "-m", "scrapy", "robots", *args],
            cwd=cwd or tmp_path,
            env=environ,
            input=input,
            capture_output=True,
            timeout=60,
        )
        return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode(), proc.stderr.decode())

    return run


def _json(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines()]


# -- each status policy, through the real fetch ---------------------------------------


def test_parsed_file_denies_and_names_the_line(site, robots):
    s = site(ROBOTS)
    out = robots(f"{s.url}/private/x")
    assert out.returncode == 1, out.stderr
    assert f"{s.url}/private/x: denied" in out.stdout
    assert "line 5: Disallow: /private" in out.stdout
    assert "line 4 (User-agent: *)" in out.stdout
    assert f"{s.url}/robots.txt: HTTP 200, 0 redirects, {len(ROBOTS)} bytes" in out.stdout
    assert "parsed with RFC9309Parser" in out.stdout
    assert "https://example.com/sitemap.xml" in out.stdout
    assert "Traceback" not in out.stderr


def test_allowed_by_a_rule_exits_0(site, robots):
    s = site(ROBOTS)
    out = robots(f"{s.url}/private/open/page", f"{s.url}/public")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "line 6: Allow: /private/open" in out.stdout
    assert "no rule of the group at line 4 (User-agent: *) matches /public" in out.stdout
    # One fetch per site, for both URLs.
    assert s.hits == ["/robots.txt"]


def test_404_allows_all(site, robots):
    s = site({"/robots.txt": (404, "User-agent: *\nDisallow: /\n", {})})
    out = robots("--json", f"{s.url}/anything")
    assert out.returncode == 0
    [answer] = _json(out.stdout)
    assert answer["allowed"] is True
    assert answer["robots_txt"]["status"] == 404
    assert answer["robots_txt"]["policy"] == "allow"
    assert answer["decision"] is None


def test_403_denies_all(site, robots):
    s = site({"/robots.txt": (403, "", {})})
    out = robots(f"{s.url}/anything")
    assert out.returncode == 1
    assert "deny all on HTTP 403" in out.stdout


@pytest.mark.timing
def test_503_is_unreachable_an_error_without_retries(site, robots):
    s = site({"/robots.txt": (503, "busy", {})})
    started = time.monotonic()
    out = robots(f"{s.url}/anything")
    assert out.returncode == 2
    assert "unreachable" in out.stdout
    assert out.stderr.count("scrapy robots: error:") == 1
    assert f"{s.url}/robots.txt unreachable: HTTP 503" in out.stderr
    # ROBOTSTXT_UNREACHABLE_RETRY_TIMES is 0 for the command: one attempt, no waiting.
    assert s.hits == ["/robots.txt"]
    assert time.monotonic() - started < 20


def test_retries_only_when_asked(site, robots):
    s = site({"/robots.txt": (503, "busy", {})})
    out = robots(
        f"{s.url}/x", "-s", "ROBOTSTXT_UNREACHABLE_RETRY_TIMES=1", "-s", "ROBOTSTXT_UNREACHABLE_RETRY_DELAY=0.2"
    )
    assert out.returncode == 2
    assert s.hits == ["/robots.txt", "/robots.txt"]


def test_redirect_is_followed_and_reported(site, robots):
    s = site({"/robots.txt": (301, "", {"Location": "/moved.txt"}), "/moved.txt": (200, ROBOTS, {})})
    out = robots("--json", f"{s.url}/private/x")
    assert out.returncode == 1
    [answer] = _json(out.stdout)
    assert answer["robots_txt"]["url"] == f"{s.url}/moved.txt"
    assert answer["robots_txt"]["redirects"] == 1
    assert answer["decision"]["rule"] == {"line": 5, "text": "Disallow: /private", "allow": False}


# -- delays -------------------------------------------------------------------------


def test_crawl_delay_and_the_slot_delay_the_crawl_would_apply(site, robots):
    s = site("User-agent: *\nCrawl-delay: 3\nRequest-rate: 1/10s\n")
    [answer] = _json(robots("--json", f"{s.url}/x").stdout)
    assert answer["crawl_delay"] == 3.0
    assert answer["request_rate"] == {"requests": 1, "seconds": 10.0}
    assert answer["delay"]["asked"] == 10.0  # the stricter of the two
    assert answer["slot_delay"] == 10.0
    out = robots(f"{s.url}/x")
    assert "Crawl-delay 3s, Request-rate 1/10s; slot delay 10s (your delay 0s)" in out.stdout


def test_the_users_delay_and_the_maximum_bound_the_slot_delay(site, robots):
    s = site("User-agent: *\nCrawl-delay: 2\n")
    [answer] = _json(robots("--json", f"{s.url}/x", "-s", "DOWNLOAD_DELAY=5").stdout)
    assert (answer["user_delay"], answer["slot_delay"]) == (5.0, 5.0)
    s = site("User-agent: *\nCrawl-delay: 90\n")
    [answer] = _json(robots("--json", f"{s.url}/x", "-s", "ROBOTSTXT_MAX_CRAWL_DELAY=30").stdout)
    assert answer["delay"] == {"asked": 90.0, "applied": 30.0, "clamped": True, "skip": False}
    assert answer["slot_delay"] == 30.0


# -- local files, agents, parsers ---------------------------------------------------------


def test_file_needs_no_network_and_takes_paths(robots, tmp_path):
    path = tmp_path / "robots.txt"
    path.write_text(ROBOTS)
    out = robots("--file", str(path), "/private/x", "https://unreachable.invalid/public")
    assert out.returncode == 1, out.stderr
    assert "/private/x: denied" in out.stdout
    assert "https://unreachable.invalid/public: allowed" in out.stdout
    assert f"{path} (local file)" in out.stdout


def test_file_from_standard_input(robots):
    out = robots("--file", "-", "--json", "/private/x", input=ROBOTS.encode())
    assert _json(out.stdout)[0]["allowed"] is False


def test_user_agent_picks_the_group(robots, tmp_path):
    path = tmp_path / "robots.txt"
    path.write_text(ROBOTS)
    out = robots("--file", str(path), "--user-agent", "FooBot/1.0", "/foo-only", "/private/x")
    assert out.returncode == 1
    assert "/foo-only: denied" in out.stdout
    assert "/private/x: allowed" in out.stdout  # FooBot's own group has no /private rule
    assert "line 1 (User-agent: FooBot)" in out.stdout


def test_the_projects_settings_apply(robots, tmp_path):
    (tmp_path / "scrapy.cfg").write_text("[settings]\ndefault = proj.settings\n")
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "__init__.py").write_text("")
    (tmp_path / "proj" / "settings.py").write_text('ROBOTSTXT_USER_AGENT = "FooBot"\nLOG_LEVEL = "DEBUG"\n')
    (tmp_path / "robots.txt").write_text(ROBOTS)
    out = robots("--file", "robots.txt", "--json", "/foo-only")
    [answer] = _json(out.stdout)
    assert (answer["user_agent"], answer["allowed"]) == ("FooBot", False)
    assert "DEBUG" not in out.stderr  # the command stays quiet unless -L says otherwise
    assert "DEBUG" in robots("--file", "robots.txt", "-L", "DEBUG", "/foo-only").stderr


@pytest.mark.parametrize("name", ["python", "protego", "rerp", "google"])
def test_parser_by_short_name(robots, tmp_path, name):
    path = tmp_path / "robots.txt"
    path.write_text(ROBOTS)
    [answer] = _json(robots("--file", str(path), "--parser", name, "--json", "/private/x").stdout)
    assert answer["allowed"] is False
    assert answer["parser"].lower().startswith(name)
    assert answer["decision"] is None  # only the rfc9309 parser can say which line decided


def test_parser_without_explain_says_so(robots, tmp_path):
    path = tmp_path / "robots.txt"
    path.write_text(ROBOTS)
    out = robots("--file", str(path), "--parser", "scrapy.robotstxt.PythonRobotParser", "/private/x")
    assert out.returncode == 1
    assert "PythonRobotParser cannot say which line decided" in out.stdout
    from scrapy.robotstxt import PythonRobotParser

    # Scrapy's own parsers read Crawl-delay in newer Scrapy (2.18 does; 2.13 to 2.16 have no crawl_delay).
    read = hasattr(PythonRobotParser, "crawl_delay")
    delay = "Crawl-delay 2s" if read else "Crawl-delay not read by PythonRobotParser"
    assert f"{delay}, Request-rate not read by PythonRobotParser" in out.stdout


# -- --compare, --lint, --json ---------------------------------------------------------


def test_compare_marks_where_parsers_disagree(robots, tmp_path):
    path = tmp_path / "robots.txt"
    path.write_text("User-agent: *\nDisallow: /*.pdf$\nDisallow: /a\nAllow: /a/b\n")
    out = robots("--file", str(path), "--compare", "/x.pdf", "/a/b/c", "/ok")
    assert out.returncode == 1, out.stderr
    rows = {line.split()[0]: line for line in out.stdout.splitlines()}
    assert rows["URL"].split()[1:3] == ["rfc9309", "protego"]
    header = rows["URL"].split()
    pdf = dict(zip(header[1:], rows["/x.pdf"].split()[1:]))
    assert (pdf["rfc9309"], pdf["python"]) == ("denied", "allowed")  # urllib: no wildcards
    assert rows["/x.pdf"].endswith("<- differ")
    longest = dict(zip(header[1:], rows["/a/b/c"].split()[1:]))
    assert (longest["rfc9309"], longest["python"]) == ("allowed", "denied")  # first match wins for urllib
    assert "differ" not in rows["/ok"]
    [first, *_] = _json(robots("--file", str(path), "--compare", "--json", "/x.pdf").stdout)
    assert first["compare"]["rfc9309"]["allowed"] is False
    assert first["compare"]["python"]["allowed"] is True


FAULTY = (
    "Disallow: /early\n"  # 1 rule before any User-agent
    "User-agent: *\n"  # 2
    "Disallwo: /typo\n"  # 3 misspelt directive
    "Crawl-delay: soon\n"  # 4 not a number
    "Disallow: /same\n"  # 5 overridden by line 6
    "Allow: /same\n"  # 6
    "Disallow: /fine\n"  # 7
)


def test_lint_a_file(robots, tmp_path):
    path = tmp_path / "robots.txt"
    path.write_text(FAULTY)
    out = robots("--file", str(path), "--lint")
    assert out.returncode == 1  # lint alone: 1 when something is at fault
    assert "4 problems" in out.stdout
    for line, code in (
        (1, "rule-before-user-agent"),
        (3, "unknown-directive"),
        (4, "bad-value"),
        (5, "overridden-disallow"),
    ):
        assert any(row.strip().startswith(f"line {line}:") and f"[{code}]" in row for row in out.stdout.splitlines()), (
            line,
            out.stdout,
        )
    assert "did you mean Disallow?" in out.stdout
    [report] = _json(robots("--file", str(path), "--lint", "--json").stdout)
    assert [(f["line"], f["code"]) for f in report["lint"]] == [
        (1, "rule-before-user-agent"),
        (3, "unknown-directive"),
        (4, "bad-value"),
        (5, "overridden-disallow"),
    ]
    path.write_text("User-agent: *\nDisallow: /x\n")
    assert robots("--file", str(path), "--lint").returncode == 0


def test_lint_a_site_reads_what_the_crawl_parsed(site, robots):
    s = site("<!DOCTYPE html>\n<html><body>Welcome</body></html>\n")
    out = robots("--lint", "--json", f"{s.url}/x")
    [answer] = _json(out.stdout)
    assert answer["allowed"] is True
    assert [f["code"] for f in answer["lint"]] == ["html"]


def test_json_lines_one_object_per_url(site, robots):
    s = site(ROBOTS)
    out = robots("--json", f"{s.url}/private/x", f"{s.url}/public", "not a url")
    assert out.returncode == 2
    answers = _json(out.stdout)
    assert [a["url"] for a in answers] == [f"{s.url}/private/x", f"{s.url}/public", "not a url"]
    assert [a["allowed"] for a in answers] == [False, True, None]
    assert "not an absolute http(s) URL" in answers[2]["error"]
    assert answers[0]["robots_txt"]["policy"] == "parse"
    assert answers[0]["sitemaps"] == ["https://example.com/sitemap.xml"]


# -- bad input: one line, exit 2, never a traceback ----------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["example.com/page"],
            "'example.com/page' is not an absolute http(s) URL (did you mean 'https://example.com/page'?)",
        ),
        (["ftp://example.com/x"], "is not a web (http/https) URL"),
        (
            ["--file", "/nonexistent/robots.txt", "/x"],
            "--file '/nonexistent/robots.txt': cannot read it (No such file or directory)",
        ),
        (["--parser", "nope.Nothing", "https://example.com/"], "--parser 'nope.Nothing' cannot be loaded"),
        (
            ["-s", "ROBOTSTXT_MAX_CRAWL_DELAY=soon", "https://example.com/"],
            "ROBOTSTXT_MAX_CRAWL_DELAY must be a number",
        ),
        # Classes that build but cannot answer, checked against the interface (#14).
        (
            ["--parser", "urllib.robotparser.RobotFileParser", "https://example.com/"],
            "--parser urllib.robotparser.RobotFileParser has no allowed(url, user_agent) method",
        ),
        (
            ["-s", "ROBOTSTXT_CACHE_STORAGE=builtins.dict", "https://example.com/"],
            "ROBOTSTXT_CACHE_STORAGE = builtins.dict has no async load() method",
        ),
        (["-s", "ROBOTSTXT_CRAWL_DELAY=maybe", "https://example.com/"], "ROBOTSTXT_CRAWL_DELAY must be True or False"),
        (
            ["-s", "ROBOTSTXT_MAXSIZE=1.5", "https://example.com/"],
            "ROBOTSTXT_MAXSIZE must be a whole number, not '1.5'",
        ),
        (
            ["-s", "ROBOTSTXT_REDIS_URL=localhost:6379", "https://example.com/"],
            "ROBOTSTXT_REDIS_URL = 'localhost:6379'",
        ),
        (
            ["-s", "ROBOTSTXT_EXCLUDED_DOMAINS=https://example.com/x", "https://example.com/"],
            "ROBOTSTXT_EXCLUDED_DOMAINS: 'https://example.com/x' is not a domain name (did you mean 'example.com'?",
        ),
        ([], "nothing to check"),
    ],
)
def test_bad_input_is_one_line(robots, args, message):
    out = robots(*args)
    assert out.returncode == 2
    assert message in out.stderr
    assert "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_binary_file_is_refused(robots, tmp_path):
    path = tmp_path / "robots.txt"
    path.write_bytes(bytes(range(256)) * 8)
    out = robots("--file", str(path), "/x")
    assert out.returncode == 2
    assert out.stderr.strip() == f"scrapy robots: error: --file '{path}' is binary data, not a robots.txt"


@pytest.mark.timing
def test_a_hanging_site_is_bounded_by_the_timeout(site, robots):
    s = site({"/robots.txt": "hang"})
    started = time.monotonic()
    out = robots(f"{s.url}/x", "-s", "DOWNLOAD_TIMEOUT=1")
    assert out.returncode == 2
    assert time.monotonic() - started < 15
    assert "unreachable" in out.stderr
    assert "Traceback" not in out.stderr
