"""`make demo`, the README's first command, runs to its end: every request accounted for,
no ERROR in the log."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The demo sites listen on a fixed port: under `make test`'s workers the two demos run on
# one worker, one after the other (tests/conftest.py, LANES).
pytestmark = [pytest.mark.slow, pytest.mark.timing]  # the smallest gap at a demo site


def make_demo(*args: str) -> str:
    done = subprocess.run(["make", "-s", "demo", *args], cwd=ROOT, capture_output=True, text=True, timeout=120)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert "49 of 49 requests accounted for." in output, output[-3000:]
    assert "] ERROR:" not in output and "Traceback" not in output, output[-3000:]
    return output


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_demo():
    output = make_demo()
    # No purpose declared: the site with AI usage preferences is a site like another.
    assert "127.0.0.16  (AI usage preferences): 5 fetched, 2 denied" in output, output[-3000:]
    assert "robotstxt/usage" not in output, output[-3000:]
    gap = re.search(r"smallest gap measured at the server ([0-9.]+)s", output)
    # Crawl-delay: 1 held: Scrapy's slot starts requests a delay apart; at the server, within
    # the suite's 5 % (test_fleet_pace.SHORT) for the time a request takes to arrive, which
    # varies by tens of milliseconds on a loaded machine (0.99 failed a clean clone's run).
    assert gap is not None and float(gap.group(1)) >= 0.95, (gap and gap.group(0), output[-3000:])


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_demo_declaring_a_purpose():
    output = make_demo("DEMO_ARGS=-s ROBOTSTXT_USAGE=train-ai")
    # Content-Usage: train-ai=n denies /, /about, /report.pdf; the longer /blog/ scope allows
    # the blog, whose /blog/2 says train-ai=n in its header: fetched, its item dropped.
    assert "127.0.0.16  (AI usage preferences): 2 fetched, 5 denied" in output, output[-3000:]
    assert "robotstxt/usage/denied/train-ai = 3" in output, output[-3000:]
    assert "robotstxt/usage/items_dropped/train-ai = 1" in output, output[-3000:]
    assert "fetched, its items dropped (header Content-Usage: train-ai=n)" in output, output[-3000:]
