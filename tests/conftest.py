from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

_HERE = Path(__file__).resolve().parent


def _corpus_dir() -> Path | None:
    candidates = [
        os.environ.get("SCRAPY_ROBOTS_CORPUS", ""),
        _HERE.parent.parent / "shared" / "corpus" / "robotstxt" / "test_data",
        Path("/work/shared/corpus/robotstxt/test_data"),
    ]
    for candidate in candidates:
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return None


CORPUS_DIR = _corpus_dir()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # `make test` spreads the suite over workers (pytest-xdist), handing out tests in this
    # order: the tests that wait longest go first, so that none of them starts when the
    # other workers are nearly done and holds the whole run for its length.
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


#: Test modules whose tests share what a test cannot have twice at once; under pytest-xdist
#: one worker runs each of them, its tests in order.
ONE_WORKER = {
    "tests/test_demo.py": "the demo sites listen on a fixed port (examples/demo_site.py)",
    "tests/test_fresh_install.py": "one virtualenv for the module (a module fixture), built once",
}


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    # xdist's own grouping (--dist loadgroup, the xdist_group mark) renames test ids, which
    # pytest 9.2 no longer reads: the groups here are named by module instead.
    if config.getoption("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class Scheduling(LoadScopeScheduling):
        """Each test a work unit of its own, but the modules of ONE_WORKER whole; units
        handed out in collection order, two ahead per worker."""

        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return module if module in ONE_WORKER else nodeid

    return Scheduling(config, log)


@pytest.fixture(scope="session")
def corpus_files() -> list[Path]:
    """The 4,231 real robots.txt files of the shared corpus (see its README)."""
    if CORPUS_DIR is None:
        pytest.skip("robots.txt corpus not found; set SCRAPY_ROBOTS_CORPUS to its test_data folder")
    return sorted(p for p in CORPUS_DIR.iterdir() if p.is_file())


BACKENDS = ["rfc9309", "protego", "python", "rerp", "reppy"]


def backend_class(name: str) -> type:
    from scrapy_robots import parsers

    class_names = {
        "protego": "ProtegoParser",
        "python": "PythonParser",
        "rerp": "RerpParser",
        "reppy": "ReppyParser",
        "rfc9309": "RFC9309Parser",
    }
    return getattr(parsers, class_names[name])


@pytest.fixture
def serve():
    """``serve(robots_handler, routes=None) -> SiteServer``: a site on its own 127.0.0.x."""
    from servers import SiteServer

    started: list[SiteServer] = []

    def start(robots, routes=None):
        host = f"127.0.0.{len(started) + 2}"
        site = SiteServer(host=host, robots=robots, routes=routes or {}).start()
        started.append(site)
        return site

    yield start
    for site in started:
        site.stop()


@pytest.fixture(scope="session")
def redis_server():
    """A real redis-server on a free loopback port, for the whole session."""
    from redis_server import RedisServer

    server = RedisServer().start()
    yield server
    server.stop()


@pytest.fixture
def redis(redis_server):
    """The session's Redis, emptied before each test."""
    if not redis_server.ping():
        redis_server.start()
    redis_server.flush()
    return redis_server
