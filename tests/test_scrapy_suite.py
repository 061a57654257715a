"""Scrapy's own tests of its robots.txt middleware, run on ours.

Scrapy's ``tests/test_downloadermiddleware_robotstxt.py``, unchanged, from the sdist
of the installed Scrapy (``make scrapy-tests`` fetches it into ``.venv/scrapy-tests``),
runs in a pytest subprocess three times:

- on Scrapy's own middleware: the anchor, every test passes;
- on ours, with ``ROBOTSTXT_STATUS_POLICY = "scrapy"`` (Scrapy's historic behaviour);
- on ours, with our defaults.

``tests/scrapy_suite/scrapy_suite_plugin.py`` swaps the class. Each run must give
exactly the outcomes below: a test that starts or stops failing fails here.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import scrapy

HERE = Path(__file__).resolve().parent
PLUGIN_DIR = HERE / "scrapy_suite"
SUITE_DIR = Path(sys.prefix) / "scrapy-tests"
SUITE_FILE = "tests/test_downloadermiddleware_robotstxt.py"

CLASSES = ("TestRobotsTxtMiddleware", "TestRobotsTxtMiddlewareWithRerp")  # the default parser, then rerp
TESTS = (
    "test_robotstxt_settings",
    "test_robotstxt",
    "test_robotstxt_emits_robots_parsed_signal",
    "test_robotstxt_multiple_reqs",
    "test_robotstxt_multiple_reqs_asyncio",
    "test_robotstxt_ready_parser",
    "test_robotstxt_meta",
    "test_robotstxt_garbage",
    "test_robotstxt_empty_response",
    "test_robotstxt_error",
    "test_robotstxt_immediate_error",
    "test_ignore_robotstxt_request",
    "test_robotstxt_user_agent_setting",
    "test_robotstxt_local_file",
)

# Each expected failure names the pattern its failure report must contain, so that a
# test failing for another reason is caught too. Both classes fail alike.

# DIFFERENCE: Scrapy's process_request is robot_parser(request), then
# process_request_2(parser, request): two undocumented hooks (process_request_2 took a
# spider argument in older Scrapy versions). Ours decides in robots_for() and verdict() and has neither. What the
# two tests check through them (ROBOTSTXT_USER_AGENT wins over USER_AGENT; data: and
# file: URLs are not checked) is tested on ours in test_middleware_basics.py.
NO_PROCESS_REQUEST_2 = {
    "test_robotstxt_user_agent_setting": r"object has no attribute 'process_request_2'",
    # The mock put in place of process_request_2 is never called for the http URL.
    "test_robotstxt_local_file": r"RobotsTxtMiddleware object at 0x[0-9a-f]+>\.process_request_2",
}

# DIFFERENCE (our defaults, RFC 9309 2.3.1.4): a network error on robots.txt, here a
# DNS failure, leaves the site "unreachable": its requests wait for the retries
# (ROBOTSTXT_UNREACHABLE_RETRY_TIMES), then are ignored. Scrapy allows the whole site.
# The "scrapy" preset allows it too, and logs the error at WARNING, which
# test_robotstxt_error also checks.
UNREACHABLE = {
    name: r"Forbidden by robots\.txt: robots\.txt unreachable \(CannotResolveHostError: Robotstxt address not found\)"
    for name in ("test_robotstxt_error", "test_robotstxt_immediate_error")
}

EXPECTED_FAILURES: dict[str, dict[str, str]] = {
    "stock": {},
    "scrapy": NO_PROCESS_REQUEST_2,
    "default": {**NO_PROCESS_REQUEST_2, **UNREACHABLE},
}


@pytest.fixture(scope="module")
def suite_dir() -> Path:
    if not (SUITE_DIR / SUITE_FILE).is_file():
        pytest.skip(f"Scrapy's test files are not in {SUITE_DIR}: run `make scrapy-tests`")
    fetched = re.search(r"^Version: (\S+)$", (SUITE_DIR / "PKG-INFO").read_text(), re.MULTILINE)
    assert fetched is not None and fetched.group(1) == scrapy.__version__, (
        f"{SUITE_DIR} holds the tests of another Scrapy than the installed {scrapy.__version__}: "
        f"rm -rf {SUITE_DIR} && make scrapy-tests"
    )
    return SUITE_DIR


def run_suite(suite_dir: Path, mode: str, report: Path) -> dict[str, dict[str, str]]:
    env = {
        **os.environ,
        "SCRAPY_ROBOTS_SUITE": mode,
        "SCRAPY_ROBOTS_SUITE_REPORT": str(report),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(PLUGIN_DIR), os.environ.get("PYTHONPATH")])),
    }
    # Scrapy's pytest options that this file needs: the asyncio reactor, and the
    # marker its conftest.py registers (the plugin does). Not our setup.cfg (-c).
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-c",
        os.devnull,
        "--rootdir",
        str(suite_dir),
        "-p",
        "scrapy_suite_plugin",
        "-p",
        "no:cacheprovider",
        "--reactor=asyncio",
        "-q",
        SUITE_FILE,
    ]
    process = subprocess.run(command, cwd=suite_dir, env=env, capture_output=True, text=True, timeout=180)
    assert report.is_file(), f"pytest exited {process.returncode} without a report:\n{process.stdout}\n{process.stderr}"
    return json.loads(report.read_text())


@pytest.mark.parametrize("mode", ["stock", "scrapy", "default"])
def test_scrapy_suite(suite_dir: Path, mode: str, tmp_path: Path) -> None:
    outcomes = run_suite(suite_dir, mode, tmp_path / "report.json")
    assert sorted(outcomes) == sorted(f"{cls}::{name}" for cls in CLASSES for name in TESTS)

    expected = EXPECTED_FAILURES[mode]
    surprises = []
    for test_id, result in sorted(outcomes.items()):
        pattern = expected.get(test_id.split("::")[1])
        if pattern is None and result["outcome"] != "passed":
            surprises.append(f"{test_id}: {result['outcome']}, expected to pass\n{result['text'][-3000:]}")
        elif pattern is not None and result["outcome"] == "passed":
            surprises.append(f"{test_id}: passed, expected to fail on /{pattern}/ (update this file)")
        elif pattern is not None and not re.search(pattern, result["text"]):
            surprises.append(f"{test_id}: failed, but not on /{pattern}/\n{result['text'][-3000:]}")
    assert not surprises, "\n\n".join(surprises)
