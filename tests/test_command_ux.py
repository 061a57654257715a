"""`scrapy robots` as a new user meets it (issue #14): right answers, clear errors, and
what users of other robots.txt testers expect. The real command, run as a subprocess."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_command import ROBOTS, _json, robots, site  # noqa: F401 - fixtures


def _without(tmp_path: Path, *packages: str) -> dict[str, str]:
    """An environment in which ``packages`` cannot be imported, as on a fresh install
    where reppy did not build: a package of that name that raises ImportError comes first."""
    shadow = tmp_path / "shadow"
    for package in packages:
        (shadow / package).mkdir(parents=True, exist_ok=True)
        (shadow / package / "__init__.py").write_text(f"raise ImportError('No module named {package}')\n")
    return {"PYTHONPATH": str(shadow)}


# -- --compare on an install without reppy ---------------------------------------------


def test_compare_leaves_out_backends_that_are_not_installed(robots, tmp_path):
    path = tmp_path / "robots.txt"
    path.write_text("User-agent: *\nDisallow: /private\nCrawl-delay: 2\n")
    env = _without(tmp_path, "reppy", "jwm")
    out = robots("--file", str(path), "--compare", "/private/x", "/ok", env=env)
    assert out.returncode == 0 or out.returncode == 1, out.stderr
    lines = out.stdout.splitlines()
    header = lines[0].split()
    assert "reppy" not in header and "google" not in header
    assert header[:5] == ["URL", "rfc9309", "protego", "python", "rerp"]
    assert not any("differ" in line for line in lines), out.stdout
    crawl_delay = next(line for line in lines if line.startswith("Crawl-delay"))
    assert crawl_delay.split()[1:] == ["2s"] * 4
    missing = [line for line in lines if "not installed" in line]
    assert [line.split(":")[0] for line in missing] == ["reppy", "google"]
    [answer] = _json(robots("--file", str(path), "--compare", "--json", "/ok", env=env).stdout)
    assert set(answer["compare"]) == {"rfc9309", "protego", "python", "rerp"}
    assert set(answer["not_installed"]) == {"reppy", "google"}


# -- the project's own middleware ------------------------------------------------------


def _project(root: Path, settings: str, spider: str = "") -> Path:
    """A Scrapy project in ``root`` with ``settings`` (and a spider module's source)."""
    (root / "proj" / "spiders").mkdir(parents=True)
    (root / "scrapy.cfg").write_text("[settings]\ndefault = proj.settings\n")
    (root / "proj" / "__init__.py").write_text("")
    (root / "proj" / "settings.py").write_text('BOT_NAME = "proj"\nSPIDER_MODULES = ["proj.spiders"]\n' + settings)
    (root / "proj" / "spiders" / "__init__.py").write_text("")
    if spider:
        (root / "proj" / "spiders" / "pages.py").write_text(spider)
    return root


PAGES_SPIDER = """
import scrapy

class Pages(scrapy.Spider):
    name = "pages"

    def __init__(self, url=None, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [url]

    def parse(self, response):
        pass
"""


def test_a_project_on_scrapys_middleware_gets_its_answers(site, robots, tmp_path):
    # Scrapy's middleware parses the (empty) body of a 403: everything is allowed; ours
    # would deny all. The command answers as the project's crawl does, and says so.
    s = site({"/robots.txt": (403, "", {}), "/page": (200, "hello", {})})
    project = _project(tmp_path / "p", "ROBOTSTXT_OBEY = True\n", PAGES_SPIDER)
    out = robots("--json", f"{s.url}/page", cwd=project)
    assert out.returncode == 0, out.stdout + out.stderr
    [answer] = _json(out.stdout)
    assert answer["allowed"] is True
    assert answer["middleware"] == "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"
    assert answer["parser"] == "ProtegoRobotParser"
    assert "note: this project crawls with Scrapy's own RobotsTxtMiddleware" in out.stderr
    text = robots(f"{s.url}/page", cwd=project).stdout
    assert "middleware   Scrapy's own, as the project's crawl" in text
    # ... which is what `scrapy crawl` does.
    import subprocess
    import sys

    subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "pages", "-a", f"url={s.url}/page"],
        cwd=project,
        capture_output=True,
        timeout=60,
        check=True,
    )
    assert "/page" in s.hits
    # With ours enabled (the add-on), ours answers: 403 denies all.
    ours = robots("--json", f"{s.url}/page", "-s", 'ADDONS={"scrapy_robots.Addon": 0}', cwd=project)
    [answer] = _json(ours.stdout)
    assert (answer["allowed"], answer["middleware"]) == (False, "scrapy_robots.RobotsTxtMiddleware")
    assert "note:" not in ours.stderr


README_BY_HAND = """
ROBOTSTXT_OBEY = True
DOWNLOADER_MIDDLEWARES = {
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
    "scrapy_robots.RobotsTxtMiddleware": 100,
}
EXTENSIONS = {"scrapy_robots.pace.backoff.PageBackoff": 0}
"""


def test_the_readmes_by_hand_setup_logs_no_duplicate_warning(robots, tmp_path):
    project = _project(tmp_path / "p", README_BY_HAND)
    (project / "robots.txt").write_text(ROBOTS)
    out = robots("--file", "robots.txt", "--json", "/private/x", cwd=project)
    assert out.returncode == 1, out.stderr
    assert out.stderr == ""
    [answer] = _json(out.stdout)
    assert answer["middleware"] == "scrapy_robots.RobotsTxtMiddleware"
    assert answer["decision"]["rule"]["line"] == 5


def test_robotstxt_obey_neither_true_nor_false_is_named(robots, tmp_path):
    project = _project(tmp_path / "p", 'ROBOTSTXT_OBEY = "maybe"\n')
    out = robots("https://example.com/", cwd=project)
    assert out.returncode == 2
    assert out.stderr.strip() == "scrapy robots: error: ROBOTSTXT_OBEY must be True or False, not 'maybe'"


def test_a_project_that_does_not_obey_is_told_so(robots, tmp_path):
    project = _project(tmp_path / "p", 'ROBOTSTXT_OBEY = False\nADDONS = {"scrapy_robots.Addon": 0}\n')
    (project / "robots.txt").write_text(ROBOTS)
    out = robots("--file", "robots.txt", "/private/x", cwd=project)
    assert out.returncode == 1
    assert "note: ROBOTSTXT_OBEY is False in this project: `scrapy crawl` does not check robots.txt" in out.stderr


# -- --lint ------------------------------------------------------------------------------


def test_lint_reads_the_sites_bytes_as_received(site, robots):
    # The middleware hands the parser UTF-8 (the Latin-1 byte as %E9); the linter sees
    # the byte itself, and the rest of the file despite the "<html" in a comment.
    s = site({"/robots.txt": (200, b"User-agent: *\n# not <html>\nDisalow: /caf\xe9\n", {})})
    out = robots("--lint", "--json", f"{s.url}/x")
    [answer] = _json(out.stdout)
    assert [(f["line"], f["code"]) for f in answer["lint"]] == [(3, "misspelt-directive"), (3, "not-utf8")]
    text = robots("--lint", f"{s.url}/x").stdout
    assert "line 3: 'Disalow' is read as Disallow" in text
    assert "line 3: byte %E9 at column 14 is not UTF-8" in text


def test_lint_a_latin1_file(robots, tmp_path):
    path = tmp_path / "robots.txt"
    path.write_bytes(b"User-agent: *\nDisallow: /caf\xe9\n")
    out = robots("--file", str(path), "--lint")
    assert out.returncode == 1
    assert "no problems found" not in out.stdout
    assert "[not-utf8]" in out.stdout


def test_lint_says_a_missing_colon_splits_the_parsers(robots, tmp_path):
    # #20 item 12: --compare shows the parsers split on "Disallow /nocolon"; --lint says why.
    path = tmp_path / "robots.txt"
    path.write_bytes(b"User-agent: *\nDisallow /nocolon\n")
    out = robots("--file", str(path), "--lint")
    assert out.returncode == 1
    assert "no problems found" not in out.stdout
    assert (
        "line 2: no colon after Disallow: Google's parser, Protego and ours read Disallow: /nocolon; "
        "urllib.robotparser and rerp skip the line (RFC 9309 requires the colon): write Disallow: /nocolon"
        "  [missing-colon]"
    ) in out.stdout
    compare = robots("--file", str(path), "--compare", "/nocolon").stdout
    assert "<- differ" in compare


def test_lint_a_latin1_rule_served_as_latin1(site, robots):
    # #20 item 12: the rule denies /caf%E9 only; a browser's /caf%C3%A9 is allowed, and
    # --lint used to say "no problems found".
    headers = {"Content-Type": "text/plain; charset=iso-8859-1"}
    s = site({"/robots.txt": (200, b"User-agent: *\nDisallow: /caf\xe9\n", headers)})
    out = robots("--lint", "--brief", f"{s.url}/caf%E9", f"{s.url}/caf%C3%A9")
    assert "no problems found" not in out.stdout
    assert f"denied   {s.url}/caf%E9" in out.stdout and f"allowed  {s.url}/caf%C3%A9" in out.stdout
    assert (
        "line 2: Disallow: /caf\xe9 (iso8859-1) is read as Disallow: /caf%E9, which matches the iso8859-1 "
        "spelling of the URL only, not /caf%C3%A9, the UTF-8 one that browsers and Scrapy send: so "
        "/caf%C3%A9 stays allowed; save robots.txt as UTF-8 (RFC 9309 2.3)  [legacy-charset]"
    ) in out.stdout


# -- --json ------------------------------------------------------------------------------


def test_json_names_the_error_of_an_unreachable_robots_txt(site, robots):
    s = site({"/robots.txt": (503, "busy", {})})
    out = robots("--json", f"{s.url}/x")
    assert out.returncode == 2
    [answer] = _json(out.stdout)
    assert answer["error"] == f"{s.url}/robots.txt unreachable: HTTP 503"
    assert answer["allowed"] is False  # the policy's verdict is still there
    assert answer["robots_txt"]["policy"] == "unreachable"


# -- nothing written -----------------------------------------------------------------------


def test_the_command_writes_nothing_into_the_projects_jobdir(site, robots, tmp_path):
    s = site(ROBOTS)
    project = _project(
        tmp_path / "p",
        'ROBOTSTXT_OBEY = True\nADDONS = {"scrapy_robots.Addon": 0}\nJOBDIR = "job"\n'
        'ROBOTSTXT_CACHE_STORAGE = "proj.storage.Marking"\n',
    )
    (project / "proj" / "storage.py").write_text(MARKING_STORAGE)
    out = robots("--json", f"{s.url}/private/x", cwd=project)
    assert out.returncode == 1, out.stderr
    assert not (project / "job").exists()
    assert not (project / "saved").exists()  # the in-memory storage answered
    # Given on the command line, a storage is used.
    out = robots("--json", f"{s.url}/private/x", "-s", "ROBOTSTXT_CACHE_STORAGE=proj.storage.Marking", cwd=project)
    assert out.returncode == 1, out.stderr
    assert (project / "saved").read_text() == s.url


MARKING_STORAGE = """
from scrapy_robots.cache import MemoryRobotsStorage


class Marking(MemoryRobotsStorage):
    async def save(self, entry):
        with open("saved", "w") as f:
            f.write(entry.site)
        await super().save(entry)
"""


# -- settings given with -s ------------------------------------------------------------------


def test_a_dict_setting_as_json(site, robots):
    s = site({"/robots.txt": (503, "busy", {})})
    out = robots("--json", f"{s.url}/x", "-s", 'ROBOTSTXT_STATUS_POLICY={"503": "allow"}')
    assert out.returncode == 0, out.stderr
    [answer] = _json(out.stdout)
    assert (answer["allowed"], answer["robots_txt"]["policy"]) == (True, "allow")


def test_a_malformed_url_is_one_line_and_the_others_are_answered(site, robots):
    s = site(ROBOTS)
    out = robots("https://[::1/x", f"{s.url}/private/x")
    assert out.returncode == 2
    assert out.stderr.strip() == "scrapy robots: error: 'https://[::1/x' is not a valid URL (Invalid IPv6 URL)"
    assert f"{s.url}/private/x: denied" in out.stdout


# -- what users of other robots.txt testers expect ----------------------------------------


def _robots_file(tmp_path: Path, text: str = ROBOTS) -> str:
    path = tmp_path / "robots.txt"
    path.write_text(text)
    return str(path)


def test_brief_is_one_line_per_url_in_the_order_given(site, robots):
    s = site(ROBOTS)
    out = robots("--brief", f"{s.url}/private/x", f"{s.url}/private/open/y", f"{s.url}/public", "nope")
    assert out.returncode == 2
    assert out.stdout.splitlines() == [
        f"denied   {s.url}/private/x  (line 5: Disallow: /private)",
        f"allowed  {s.url}/private/open/y  (line 6: Allow: /private/open)",
        f"allowed  {s.url}/public  (no rule matches)",
        "error    nope  ('nope' is not an absolute http(s) URL: a path needs --file PATH (the robots.txt to check "
        "it against), a URL its scheme and host (https://HOST/PATH))",
    ]
    assert robots("--brief", f"{s.url}/robots.txt").stdout.endswith(
        "(/robots.txt is always allowed (RFC 9309, 2.2.2))\n"
    )
    policy = site({"/robots.txt": (403, "", {})})
    assert robots("--brief", f"{policy.url}/x").stdout == f"denied   {policy.url}/x  (deny all on HTTP 403)\n"


def test_urls_from_a_file_and_from_standard_input(robots, tmp_path):
    robots_txt = _robots_file(tmp_path)
    listed = tmp_path / "urls.txt"
    listed.write_text("# to check\n/private/a\n\n  /public  \n")
    out = robots("--file", robots_txt, "--brief", "/first", "--urls", str(listed))
    assert [line.split()[:2] for line in out.stdout.splitlines()] == [
        ["allowed", "/first"],
        ["denied", "/private/a"],
        ["allowed", "/public"],
    ]
    out = robots("--file", robots_txt, "--json", "--urls", "-", input=b"/private/b\n/ok\n")
    assert [(a["url"], a["allowed"]) for a in _json(out.stdout)] == [("/private/b", False), ("/ok", True)]
    clash = robots("--file", "-", "--urls", "-", input=b"")
    assert (clash.returncode, clash.stderr.strip()) == (
        2,
        "scrapy robots: error: --file - and --urls - cannot both read standard input",
    )
    missing = robots("--file", robots_txt, "--urls", str(tmp_path / "none.txt"))
    assert missing.returncode == 2 and f"--urls '{tmp_path / 'none.txt'}': cannot read it" in missing.stderr


def test_several_user_agents_in_one_call(robots, tmp_path):
    robots_txt = _robots_file(tmp_path)
    out = robots(
        "--file",
        robots_txt,
        "--json",
        "--user-agent",
        "FooBot/2.0",
        "--user-agent",
        "OtherBot",
        "/foo-only",
        "/private/x",
    )
    answers = [(a["url"], a["product_token"], a["allowed"]) for a in _json(out.stdout)]
    assert answers == [
        ("/foo-only", "FooBot", False),
        ("/foo-only", "OtherBot", True),
        ("/private/x", "FooBot", True),
        ("/private/x", "OtherBot", False),
    ]
    # Each agent's own group gives its Crawl-delay: FooBot's group has none.
    delays = {(a["url"], a["product_token"]): a["crawl_delay"] for a in _json(out.stdout)}
    assert delays[("/foo-only", "FooBot")] is None and delays[("/foo-only", "OtherBot")] == 2.0
    brief = robots("--file", robots_txt, "--brief", "--user-agent", "FooBot", "--user-agent", "OtherBot", "/foo-only")
    assert brief.stdout.splitlines() == [
        "denied   FooBot    /foo-only  (line 2: Disallow: /foo-only)",
        "allowed  OtherBot  /foo-only  (no rule matches)",
    ]
    report = robots("--file", robots_txt, "--user-agent", "FooBot", "--user-agent", "OtherBot", "/foo-only").stdout
    assert "/foo-only (FooBot): denied" in report and "/foo-only (OtherBot): allowed" in report
    table = robots(
        "--file", robots_txt, "--compare", "--user-agent", "FooBot", "--user-agent", "OtherBot", "/foo-only"
    ).stdout.splitlines()
    rows = {line.split("  ")[0].strip(): line.split()[-1] for line in table[2:]}
    assert rows["/foo-only (FooBot)"] == "denied" and rows["/foo-only (OtherBot)"] == "allowed"
    assert "Crawl-delay (OtherBot)" in rows  # FooBot's group has no Crawl-delay


def test_a_summary_when_no_url_is_given(robots, tmp_path):
    robots_txt = _robots_file(tmp_path, "Disallow: /early\n" + ROBOTS + "Host: example.com\n")
    out = robots("--file", robots_txt)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        f"{robots_txt}: 2 groups, 3 rules, 1 sitemap",
        "  line 2    User-agent: FooBot",
        "    line 3    Disallow: /foo-only",
        "  line 5    User-agent: *",
        "    line 6    Disallow: /private",
        "    line 7    Allow: /private/open",
        "    line 8    Crawl-delay: 2",
        "  before any User-agent, for no crawler: lines 1",
        "  line 9    Sitemap: https://example.com/sitemap.xml",
        "  Host: example.com",
    ]
    [summary] = _json(robots("--file", robots_txt, "--json").stdout)
    assert [g["user_agents"][0]["user_agent"] for g in summary["summary"]["groups"]] == ["FooBot", "*"]


def test_a_summary_of_a_sites_robots_txt(site, robots):
    s = site(ROBOTS)
    out = robots("--summary", f"{s.url}/", f"{s.url}/other")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == f"{s.url}/robots.txt: 2 groups, 3 rules, 1 sitemap"
    assert out.stdout.count("groups") == 1  # one summary per robots.txt


SPIDERS = """
import scrapy

class Foo(scrapy.Spider):
    name = "foo"
    custom_settings = {"ROBOTSTXT_USER_AGENT": "FooBot"}

class Other(scrapy.Spider):
    name = "other"
    user_agent = "OtherBot/1.0 (+https://example.com/bot)"
"""


def test_spider_takes_that_spiders_settings(robots, tmp_path):
    project = _project(tmp_path / "p", 'ROBOTSTXT_OBEY = True\nADDONS = {"scrapy_robots.Addon": 0}\n', SPIDERS)
    (project / "robots.txt").write_text(ROBOTS)
    [foo] = _json(robots("--file", "robots.txt", "--json", "--spider", "foo", "/foo-only", cwd=project).stdout)
    assert (foo["user_agent"], foo["allowed"]) == ("FooBot", False)
    [other] = _json(robots("--file", "robots.txt", "--json", "--spider", "other", "/foo-only", cwd=project).stdout)
    assert (other["product_token"], other["allowed"]) == ("OtherBot", True)
    # -s still wins over the spider's custom_settings, as in scrapy crawl.
    [given] = _json(
        robots(
            "--file",
            "robots.txt",
            "--json",
            "--spider",
            "foo",
            "-s",
            "ROBOTSTXT_USER_AGENT=Else",
            "/foo-only",
            cwd=project,
        ).stdout
    )
    assert given["user_agent"] == "Else"
    unknown = robots("--file", "robots.txt", "--spider", "nope", "/x", cwd=project)
    assert unknown.returncode == 2
    assert unknown.stderr.strip() == (
        "scrapy robots: error: --spider nope: no spider of that name; this project's spiders: foo, other"
    )


def test_colour_on_a_terminal_only(robots, tmp_path):
    import os
    import pty
    import subprocess
    import sys

    robots_txt = _robots_file(tmp_path)
    piped = robots("--file", robots_txt, "/private/x", "/ok")
    assert "\x1b[" not in piped.stdout
    forced = robots("--file", robots_txt, "--brief", "--color", "always", "/private/x", "/ok").stdout
    assert "\x1b[31mdenied " in forced and "\x1b[32mallowed" in forced
    # On a terminal, colour by default; NO_COLOR turns it off.
    for extra_env, coloured in (({}, True), ({"NO_COLOR": "1"}, False)):
        leader, follower = pty.openpty()
        env = {k: v for k, v in os.environ.items() if not k.startswith("SCRAPY_") and k != "NO_COLOR"}
        env.update(TERM="xterm", **extra_env)
        proc = subprocess.run(
            [sys.executable, "-m", "scrapy", "robots", "--file", robots_txt, "--brief", "/private/x"],
            cwd=tmp_path,
            env=env,
            stdout=follower,
            stderr=subprocess.PIPE,
            timeout=60,
        )
        os.close(follower)
        output = os.read(leader, 65536).decode()
        os.close(leader)
        assert proc.returncode == 1
        assert ("\x1b[31mdenied" in output) is coloured, output


def test_strict_lint_fails_on_findings_for_ci(site, robots, tmp_path):
    s = site("User-agent: *\nDisalow: /x\n")
    plain = robots("--lint", f"{s.url}/ok")
    assert plain.returncode == 0  # --lint reports; the verdicts decide the exit status
    strict = robots("--strict", f"{s.url}/ok")
    assert strict.returncode == 1
    assert "[misspelt-directive]" in strict.stdout  # --strict implies --lint
    clean = site("User-agent: *\nDisallow: /x\n")
    assert robots("--strict", f"{clean.url}/ok").returncode == 0
    robots_txt = _robots_file(tmp_path, "User-agent: *\nDisalow: /x\n")
    assert robots("--file", robots_txt, "--strict").returncode == 1
    assert robots("--file", robots_txt, "--strict", "/ok").returncode == 1


# -- speed -------------------------------------------------------------------------------------


@pytest.mark.timing
def test_a_thousand_urls_cost_well_under_a_second_more_than_one(robots, tmp_path):
    # Issue #14: 1,000 URLs stay under 1 s more than `scrapy version`. The start-up is
    # Scrapy's (one crawl, whatever the number of URLs); what the command adds per URL is
    # measured here, against a run with one URL (best of two: the machine is shared).
    import time

    robots_txt = _robots_file(tmp_path)
    listed = tmp_path / "urls.txt"
    listed.write_text("".join(f"/private/{i}\n" if i % 2 else f"/page/{i}\n" for i in range(1000)))

    def best(*args: str) -> tuple[float, str]:
        times, stdout = [], ""
        for _ in range(2):
            started = time.monotonic()
            stdout = robots(*args).stdout
            times.append(time.monotonic() - started)
        return min(times), stdout

    one, _ = best("--file", robots_txt, "/x")
    many, stdout = best("--file", robots_txt, "--urls", str(listed))
    assert stdout.count(": denied\n") == 500
    assert many - one < 1.0, (one, many)


# -- issue #20: what a new user still meets ----------------------------------------------


def test_max_waiting_has_no_meaning_in_the_command(site, robots):
    # The crawl's back-pressure: 7 URLs with ROBOTSTXT_MAX_WAITING=2 (or 0) answered
    # 2 and failed 5 with "(_RoomFull: )".
    s = site(ROBOTS)
    urls = [f"{s.url}/page{i}" for i in range(6)] + [f"{s.url}/private/x"]
    for bound in ("2", "0"):
        out = robots("--brief", "-s", f"ROBOTSTXT_MAX_WAITING={bound}", *urls)
        assert out.returncode == 1, out.stdout + out.stderr  # one URL denied, no error
        lines = out.stdout.splitlines()
        assert len(lines) == 7 and sum(line.startswith("allowed") for line in lines) == 6, out.stdout
        assert "RoomFull" not in out.stdout + out.stderr


def test_a_pipe_closed_early_ends_quietly(tmp_path):
    # `scrapy robots --summary ... | head -1`: no BrokenPipeError traceback.
    import subprocess
    import sys

    big = tmp_path / "robots.txt"
    big.write_text("User-agent: *\n" + "".join(f"Disallow: /private-{i}/\n" for i in range(20_000)))
    for mode in (["--summary"], ["--summary", "--json"], ["--json", "--lint"]):
        command = [sys.executable, "-m", "scrapy", "robots", "--file", str(big), *mode]
        if mode[-1] == "--lint":
            command += [f"/page{i}" for i in range(3000)]
        proc = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout is not None and proc.stderr is not None
        first = proc.stdout.readline()
        proc.stdout.close()  # as `head -1` does
        stderr = proc.stderr.read().decode()
        proc.wait(timeout=60)
        assert first, mode
        assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, (mode, stderr)


def test_ctrl_c_while_robots_txt_is_fetched_is_one_line_and_130(site, tmp_path):
    # It printed two "Unhandled error in Deferred" tracebacks (CancelledError) and exited 2.
    import signal
    import subprocess
    import sys
    import time

    s = site({"/robots.txt": "hang"})
    proc = subprocess.Popen(
        [sys.executable, "-m", "scrapy", "robots", f"{s.url}/a", f"{s.url}/b"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 20
    while "/robots.txt" not in s.hits and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "/robots.txt" in s.hits
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, (out, err)
    assert err.decode().strip().splitlines() == ["scrapy robots: interrupted"], err.decode()
    assert out == b""


def test_a_urls_file_with_a_byte_order_mark(robots, tmp_path):
    # Its first URL was an error ("'\ufeff/page' is not an absolute http(s) URL").
    (tmp_path / "robots.txt").write_text("User-agent: *\nDisallow: /private\n")
    (tmp_path / "urls.txt").write_bytes("\ufeff/page\n/private/x\n".encode())
    out = robots("--file", "robots.txt", "--urls", "urls.txt", "--brief")
    assert out.returncode == 1, out.stdout + out.stderr  # one denied, no error
    assert [line.split()[0] for line in out.stdout.splitlines()] == ["allowed", "denied"]


# -- the record is the crawls', the help says the command's defaults ---------------------------


def test_the_command_never_writes_into_the_crawls_record_and_says_so(site, robots, tmp_path):
    # Issue #48: the command's fetch is no crawl's; a record given with -s stays untouched.
    s = site(ROBOTS)
    folder = tmp_path / "record"
    for _ in range(2):  # twice: the second run finds nothing of the first either
        out = robots("-s", f"ROBOTSTXT_RECORD={folder}", f"{s.url}/private/x", f"{s.url}/a")
        assert out.returncode == 1, out.stderr
        assert not folder.exists() or not list(folder.iterdir()), list(folder.iterdir())
        notes = [line for line in out.stderr.splitlines() if "ROBOTSTXT_RECORD" in line]
        assert notes == [
            f"scrapy robots: note: ROBOTSTXT_RECORD = {str(folder)!r} is not used: the command writes nothing "
            "into a crawl's compliance record (--record DIR reads one)"
        ], out.stderr
    # Not set: no note.
    out = robots(f"{s.url}/a")
    assert "ROBOTSTXT_RECORD" not in out.stderr, out.stderr


def test_help_gives_the_commands_own_log_level_and_a_proper_title(robots):
    out = robots("--help")
    assert out.returncode == 0, out.stderr
    assert "log level (default: WARNING)" in out.stdout, out.stdout
    assert "(default: DEBUG)" not in out.stdout
    assert "Robots.Txt" not in out.stdout
    assert "\nRobots Options\n" in out.stdout, out.stdout
