from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from redis_server import PACE_NICE

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


#: Test modules that one worker runs in order, by lane: what a test cannot have twice at
#: once (a fixed port, a module's virtualenv), and the fleet's pace tests, which measure
#: the gaps two crawler processes leave at a site: two of them at a time at most, so that
#: the crawlers and the sites keep time on a 2-core machine.
LANES = {
    "tests/test_demo.py": "demo",  # the demo sites listen on a fixed port (examples/demo_site.py)
    "tests/test_fresh_install.py": "fresh-install",  # one virtualenv for the module, built once
    "tests/test_fleet_link.py": "fleet-a",
    "tests/test_fleet_lock.py": "fleet-a",
    "tests/test_fleet.py": "fleet-a",
    "tests/test_fleet_inprocess.py": "fleet-a",
    "tests/test_fleet_cluster_failover.py": "fleet-a",
    "tests/test_fleet_cluster.py": "fleet-a",
    "tests/test_fleet_pace.py": "fleet-b",
    "tests/test_fleet_backoff.py": "fleet-b",
    "tests/test_bench_fleet_faults.py": "fleet-b",
    "tests/test_fleet_sentinel.py": "fleet-b",
    "tests/test_fleet_leases.py": "fleet-b",  # three crawler processes, one SIGKILLed
    "tests/test_bench_fleet_capacity.py": "fleet-b",
}


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    # xdist's own grouping (--dist loadgroup, the xdist_group mark) renames test ids, which
    # pytest 9.2 no longer reads: the lanes here are named by module instead.
    if config.getoption("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class Scheduling(LoadScopeScheduling):
        """Each test a work unit of its own, but a lane's modules one unit; units handed
        out in collection order, two ahead per worker."""

        def _split_scope(self, nodeid: str) -> str:
            return LANES.get(nodeid.split("::", 1)[0], nodeid)

    return Scheduling(config, log)


# Under pytest-xdist, the tests marked `timing` (they assert on a real clock: gaps at a
# site, seconds to stop) run at the normal CPU priority and every other test at a lower
# one (nice 10, its processes too), so that a worker busy parsing or starting `scrapy`
# processes does not make another worker's crawl late. The fleet's pace tests (the timing
# tests of a fleet lane) run higher still (nice -10), with the Redis servers they talk to
# (redis_server.py starts every server there, whichever test starts it): their two to four
# crawler processes keep one pace through Redis, and a start 100 ms late at the site reads
# as a gap under the Crawl-delay; the other timing tests (`scrapy` processes started and
# stopped) each wait on one process of their own. Only where the priority can be
# raised again (root, or CAP_SYS_NICE); elsewhere every test runs at the priority given.
_NICE = 10
_RENICE = bool(os.environ.get("PYTEST_XDIST_WORKER")) and hasattr(os, "setpriority") and os.geteuid() == 0


def _niceness(item: pytest.Item) -> int:
    if item.get_closest_marker("timing") is None:
        return _NICE
    if LANES.get(item.nodeid.split("::", 1)[0], "").startswith("fleet"):
        return PACE_NICE
    return 0


def pytest_runtest_setup(item: pytest.Item) -> None:
    if _RENICE:
        os.setpriority(os.PRIO_PROCESS, 0, _niceness(item))


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
