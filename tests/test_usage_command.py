"""`scrapy robots --usage`: the real command, as a subprocess, on a local sample file."""

from __future__ import annotations

import json
import os
import subprocess
import sys

SAMPLE = """\
# A sample robots.txt written for these tests.
User-agent: FooBot
Content-Usage: train-ai=n
Content-Usage: /open/ train-ai=y
Disallow: /private

User-agent: *
Content-Signal: search=yes, ai-input=yes, ai-train=no
Allow: /
"""


def _robots(tmp_path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "robots.txt").write_text(SAMPLE)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("SCRAPY_")}
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "robots", "--file", "robots.txt", *args],
        cwd=tmp_path,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_usage_answers_for_the_purpose_quoting_the_line(tmp_path):
    out = _robots(
        tmp_path,
        "--user-agent",
        "FooBot",
        "--usage",
        "train-ai",
        "https://example.com/page",
        "https://example.com/open/a",
    )
    assert "https://example.com/page: denied" in out.stdout, out.stdout + out.stderr
    assert "line 3 (Content-Usage: train-ai=n) denies train-ai" in out.stdout
    assert "https://example.com/open/a: allowed" in out.stdout
    # An allowed URL quotes its deciding line too: the longer /open/ scope.
    assert "train-ai: allowed by line 4 (Content-Usage: /open/ train-ai=y)" in out.stdout


def test_usage_report_row_for_every_purpose(tmp_path):
    out = _robots(tmp_path, "--user-agent", "FooBot", "--usage", "train-ai,search", "https://example.com/page")
    lines = out.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().startswith("usage"))
    assert lines[at].split(None, 1)[1] == "train-ai: denied by line 3 (Content-Usage: train-ai=n)", out.stdout
    assert lines[at + 1].strip() == "search: allowed, not stated (unstated means allowed)", out.stdout


def test_brief_names_the_preference_that_denied(tmp_path):
    out = _robots(
        tmp_path,
        "--user-agent",
        "FooBot",
        "--usage",
        "train-ai",
        "--brief",
        "https://example.com/page",
        "https://example.com/private/x",
    )
    assert out.stdout.splitlines() == [
        "denied   https://example.com/page  (line 3 (Content-Usage: train-ai=n) denies train-ai)",
        "denied   https://example.com/private/x  (line 5: Disallow: /private)",
    ], out.stdout + out.stderr


def test_usage_json_carries_every_purpose(tmp_path):
    out = _robots(tmp_path, "--user-agent", "OtherBot", "--usage", "ai-train,search", "--json", "https://example.com/x")
    [report] = [json.loads(line) for line in out.stdout.splitlines()]
    assert report["allowed"] is False
    assert report["usage"]["train-ai"]["line"] == 8
    assert report["usage"]["search"] == {
        "decision": "allow",
        "stated": True,
        "line": 8,
        "text": "Content-Signal: search=yes, ai-input=yes, ai-train=no",
        "source": "robots.txt",
    }


def test_without_usage_nothing_changes(tmp_path):
    out = _robots(tmp_path, "--user-agent", "FooBot", "--json", "https://example.com/page")
    [report] = [json.loads(line) for line in out.stdout.splitlines()]
    assert report["allowed"] is True and report["usage"] is None


def test_unknown_purpose_is_an_error_naming_the_option(tmp_path):
    out = _robots(tmp_path, "--usage", "ai_train", "https://example.com/page")
    assert out.returncode != 0
    assert "--usage 'ai_train': unknown purpose; known purposes: " in out.stderr
    # Given as the setting, the setting is named.
    out = _robots(tmp_path, "-s", "ROBOTSTXT_USAGE=ai_train", "https://example.com/page")
    assert "ROBOTSTXT_USAGE: unknown purpose 'ai_train'" in out.stderr


def test_lint_flags_usage_lines(tmp_path):
    (tmp_path / "bad.txt").write_text("Content-Signal: ai-train=no\nUser-agent: *\nContent-Signal: ai_train=no\n")
    environ = {k: v for k, v in os.environ.items() if not k.startswith("SCRAPY_")}
    out = subprocess.run(
        [sys.executable, "-m", "scrapy", "robots", "--file", "bad.txt", "--lint", "https://e.com/"],
        cwd=tmp_path,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "ai_train" in out.stdout and "did you mean ai-train?" in out.stdout, out.stdout + out.stderr
    assert "before any User-agent" in out.stdout


def test_usage_shows_tdmrep_beside_robots_txt_and_counts_one_fetch_per_site(tmp_path):
    """--usage train-ai against a real site: tdmrep.json fetched once, its rule quoted."""
    import socket
    import time

    site = tmp_path / "site"
    (site / ".well-known").mkdir(parents=True)
    (site / "robots.txt").write_text("User-agent: *\nContent-Signal: ai-train=yes\n")
    rules = [{"location": "/books/*", "tdm-reservation": 1, "tdm-policy": "https://p.example/policy"}]
    (site / ".well-known" / "tdmrep.json").write_text(json.dumps(rules))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tmp_path / "server.log"
    with open(log, "w") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"], cwd=site, stderr=out, stdout=out
        )
    try:
        for _ in range(50):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        environ = {k: v for k, v in os.environ.items() if not k.startswith("SCRAPY_")}
        base = f"http://127.0.0.1:{port}"
        done = subprocess.run(
            [sys.executable, "-m", "scrapy", "robots", "--usage", "train-ai", f"{base}/books/a", f"{base}/x"],
            cwd=tmp_path,
            env=environ,
            capture_output=True,
            text=True,
            timeout=60,
        )
        # The same question with the site's robots.txt as a local file: the answer is
        # robots.txt's alone, and says so; no tdmrep.json is asked for, nor made up.
        (tmp_path / "robots.txt").write_text((site / "robots.txt").read_text())
        local = subprocess.run(
            [
                sys.executable,
                "-m",
                "scrapy",
                "robots",
                "--usage",
                "train-ai",
                "--file",
                "robots.txt",
                f"{base}/books/a",
            ],
            cwd=tmp_path,
            env=environ,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        server.terminate()
        server.wait()
    assert f"{base}/books/a: allowed" in local.stdout, local.stdout + local.stderr
    assert "tdmrep       not read for train-ai: --file answers for robots.txt alone" in local.stdout, local.stdout
    assert "HTTP 404" not in local.stdout and "tdmrep.json (" not in local.stdout, local.stdout
    text = done.stdout
    assert f"{base}/books/a: denied" in text, text + done.stderr
    assert "Forbidden by TDMRep reservation: tdmrep.json rule 1" in text
    assert "train-ai: allowed by line 2 (Content-Signal: ai-train=yes)" in text  # robots.txt's answer beside it
    assert "tdmrep       reserved for train-ai: tdmrep.json rule 1" in text
    assert "tdmrep       unset for train-ai: no rule of tdmrep.json matches /x" in text
    assert f"{base}/x: allowed" in text
    assert log.read_text().count("GET /.well-known/tdmrep.json") == 1  # the live run's, none from --file


def _robots_of(tmp_path, text: str, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "drafts.txt").write_text(text)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("SCRAPY_")}
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "robots", "--file", "drafts.txt", *args],
        cwd=tmp_path,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_signal_before_any_user_agent_says_its_reading_in_the_report(tmp_path):
    text = "Content-Signal: search=yes, ai-train=no\nUser-agent: *\nAllow: /\n"
    out = _robots_of(tmp_path, text, "--usage", "train-ai,search", "https://e.com/a", "https://e.com/b")
    reading = "line 1 (Content-Signal: search=yes, ai-train=no (before any User-agent: read for every crawler))"
    assert out.stdout.count(f"reason       Forbidden by robots.txt usage preference: {reading} denies train-ai") == 2, (
        out.stdout + out.stderr
    )
    assert f"search: allowed by {reading[:6]}" in out.stdout
    lint = _robots_of(tmp_path, text, "--lint", "https://e.com/")
    assert "reads it for every crawler" in lint.stdout, lint.stdout + lint.stderr


def test_a_url_the_rules_disallow_has_no_preference(tmp_path):
    # attach-05 section 3.4: /never/test is not crawlable, its usage preference N/A.
    text = "User-agent: *\nAllow: /\nDisallow: /never/\nContent-Usage: train-ai=n\n"
    out = _robots_of(tmp_path, text, "--usage", "train-ai", "https://e.com/never/test", "https://e.com/test")
    lines = out.stdout.splitlines()
    at = lines.index("https://e.com/never/test: denied")
    assert "rule         line 3: Disallow: /never/" in lines[at + 3], out.stdout
    assert "usage        train-ai: allowed, not stated (unstated means allowed)" in lines[at + 5], out.stdout
    assert "usage        train-ai: denied by line 4 (Content-Usage: train-ai=n)" in out.stdout
