from __future__ import annotations

import os
from pathlib import Path

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
