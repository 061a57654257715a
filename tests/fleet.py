"""Run `scrapy crawl` processes of the test fleet project without blocking the reactor
that serves the test sites."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from processes import CrawlerHandle, result_file, settings_args, start_process

PROJECT = Path(__file__).resolve().parent / "fleet_project"


def start_crawler(urls: list[str], redis_url: str, **settings: Any) -> CrawlerHandle:
    out = result_file("fleet-")
    args = ["crawl", "fleet", "-a", f"urls={','.join(urls)}", "-a", f"out={out}", "-s", f"REDIS_URL={redis_url}"]
    # The project first, then the caller's PYTHONPATH if any: the package tree to run
    # (bench/paced_stop.py --tree), else the installed package.
    pythonpath = os.pathsep.join(filter(None, [str(PROJECT), os.environ.get("PYTHONPATH")]))
    return start_process(args + settings_args(settings), out, cwd=PROJECT, pythonpath=pythonpath)
