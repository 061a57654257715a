"""Storages (``ROBOTSTXT_CACHE_STORAGE``): one conformance suite that every storage
passes, then what is particular to each (the SQLite file: persistence, crash safety,
corruption; the memory one: its bound)."""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest
import pytest_twisted
from scrapy import signals
from scrapy.utils.defer import deferred_from_coro
from scrapy.utils.test import get_crawler

from scrapy_robots.cache import MemoryRobotsStorage, RobotsEntry, RobotsStorage
from scrapy_robots.cache import sqlite as sqlite_storage_module
from scrapy_robots.cache.sqlite import KEEP_AFTER_EXPIRY, SCHEMA_VERSION, SqliteRobotsStorage
from scrapy_robots.status.policy import Action


def memory_storage(request: pytest.FixtureRequest, tmp_path: Path) -> RobotsStorage:
    return MemoryRobotsStorage()


def sqlite_storage(request: pytest.FixtureRequest, tmp_path: Path) -> RobotsStorage:
    return SqliteRobotsStorage(tmp_path / "robotstxt.sqlite3")


def redis_storage(request: pytest.FixtureRequest, tmp_path: Path) -> RobotsStorage:
    """The fleet's storage on the session's real redis-server (emptied per test). Every
    load goes to Redis: the site is dropped from the local tier first."""
    from scrapy_robots.fleet.link import RedisLink
    from scrapy_robots.fleet.storage import RedisRobotsStorage

    def on_the_loop(coro: Coroutine[Any, Any, T]) -> Any:
        # The tests' coroutines are driven by Twisted; the Redis client needs the asyncio
        # loop, where Scrapy runs the middleware's. A call made on the loop (save, from
        # fetch_once) stays there.
        return coro if asyncio.current_task() is not None else deferred_from_coro(coro)

    class ThroughRedis(RedisRobotsStorage):
        async def load(self, site: str) -> RobotsEntry | None:
            self.local._packed.pop(site, None)  # as another crawler of the fleet would
            return await on_the_loop(super().load(site))

        async def save(self, entry: RobotsEntry) -> None:
            await on_the_loop(super().save(entry))

        async def fetch_once(self, site: str, fetch: Any) -> RobotsEntry:
            return await on_the_loop(super().fetch_once(site, fetch))

    server = request.getfixturevalue("redis")
    return ThroughRedis(RedisLink(server.url, 5.0), "scrapy-robots-test")


#: name -> factory(request, tmp_path): a storage, empty. Another storage joins the whole
#: suite with one line here (a factory may ask for fixtures: request.getfixturevalue("redis")).
STORAGES: dict[str, Callable[[pytest.FixtureRequest, Path], RobotsStorage]] = {
    "memory": memory_storage,
    "sqlite": sqlite_storage,
    "redis": redis_storage,
}


@pytest_twisted.async_yield_fixture(params=sorted(STORAGES))
async def storage(request, tmp_path):
    store = STORAGES[request.param](request, tmp_path)
    yield store
    # As Scrapy calls it (spider_closed): on the asyncio loop, which the Redis client needs.
    await deferred_from_coro(store.close())


NOW = time.time()
T = TypeVar("T")


def entry(site: str = "https://example.com:443", **fields: Any) -> RobotsEntry:
    values: dict[str, Any] = {
        "action": Action.PARSE,
        "fetched_at": NOW,
        "expires_at": NOW + 3600,
        "status": 200,
        "url": f"{site}/robots.txt",
        "body": b"User-agent: *\nDisallow: /private\n",
    }
    values["size"] = len(values["body"])
    values.update(fields)
    return RobotsEntry(site=site, **values)


def assert_same(loaded: RobotsEntry | None, saved: RobotsEntry) -> None:
    assert loaded is not None
    assert loaded == saved  # every stored field (body, parser and delay compare apart)
    assert loaded.body == saved.body
    assert type(loaded.action) is Action


# -- the conformance suite: every storage ------------------------------------------------


@pytest_twisted.ensureDeferred
async def test_round_trip_of_every_field(storage):
    saved = entry(
        "http://example.org:8080",
        status=200,
        url="https://www.example.org/robots.txt",
        redirects=2,
        size=123,
        truncated=True,
        error="TimeoutError: took too long",
        failures=3,
        unreachable_since=NOW - 7200.5,
        fetched_at=NOW - 0.25,
        expires_at=NOW + 86400.125,
    )
    await storage.save(saved)
    loaded = await storage.load("http://example.org:8080")
    assert_same(loaded, saved)
    assert (loaded.redirects, loaded.truncated, loaded.failures) == (2, True, 3)
    assert loaded.fetched_at == saved.fetched_at and loaded.expires_at == saved.expires_at


@pytest.mark.parametrize("action", list(Action))
@pytest_twisted.ensureDeferred
async def test_every_action(storage, action):
    saved = entry(action=action, body=b"" if action is Action.PARSE else None, status=None, error="x")
    await storage.save(saved)
    assert_same(await storage.load(saved.site), saved)


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"", id="empty"),  # an empty robots.txt is a body, not "no body"
        pytest.param(b"User-agent: *\x00\nDisallow: /\xff\xfe\x80 \xc3(\n\x00", id="nul-and-non-utf8"),
        pytest.param(bytes(range(256)) * 4096, id="1mb-binary"),
        pytest.param(b"User-agent: *\nDisallow: /a\n" * 40_000, id="1mb-text"),
    ],
)
@pytest_twisted.ensureDeferred
async def test_bodies_come_back_byte_for_byte(storage, body):
    saved = entry(body=body, size=len(body))
    await storage.save(saved)
    assert_same(await storage.load(saved.site), saved)


@pytest_twisted.ensureDeferred
async def test_entry_without_body(storage):
    saved = entry(action=Action.DENY, status=403, body=None)
    await storage.save(saved)
    loaded = await storage.load(saved.site)
    assert_same(loaded, saved)
    assert loaded.body is None


@pytest_twisted.ensureDeferred
async def test_parser_and_delay_are_not_kept(storage):
    saved = entry()
    saved.parser = object()  # type: ignore[assignment]
    saved.delay = object()  # type: ignore[assignment]
    await storage.save(saved)
    loaded = await storage.load(saved.site)
    assert loaded is not None and loaded.parser is None and loaded.delay is None


@pytest_twisted.ensureDeferred
async def test_save_overwrites(storage):
    await storage.save(entry(body=b"User-agent: *\nDisallow: /old\n", failures=1))
    newer = entry(body=b"User-agent: *\nDisallow: /new\n", fetched_at=NOW + 10, failures=0)
    await storage.save(newer)
    assert_same(await storage.load(newer.site), newer)
    assert len(storage) == 1


@pytest_twisted.ensureDeferred
async def test_load_now_answers_as_load_or_not_at_all(storage):
    saved = entry("https://now.example:443", expires_at=NOW + 3600)
    await storage.save(saved)
    now = storage.load_now("https://now.example:443")
    # Memory, SQLite and the fleet's local tier answer at once; a storage that must
    # wait says None, and the middleware awaits load().
    assert now is not None, type(storage).__name__
    assert_same(now, saved)
    assert storage.load_now("https://unknown.example:443") is None


@pytest_twisted.ensureDeferred
async def test_unknown_site(storage):
    assert await storage.load("https://unknown.example:443") is None
    await storage.save(entry("https://example.com:443"))
    # Sites are "scheme://host:port": another scheme or port is another site.
    assert await storage.load("http://example.com:80") is None
    assert await storage.load("https://example.com:8443") is None


@pytest_twisted.ensureDeferred
async def test_expired_entries_are_still_loaded(storage):
    # They carry the failure count and the last good body (RFC 9309 2.4).
    saved = entry(fetched_at=NOW - 7200, expires_at=NOW - 3600, failures=2)
    await storage.save(saved)
    loaded = await storage.load(saved.site)
    assert_same(loaded, saved)
    assert not loaded.fresh(time.time())


@pytest_twisted.ensureDeferred
async def test_fetch_once_fetches_and_saves(storage):
    calls = []
    fetched = entry("https://fetched.example:443")

    async def fetch() -> RobotsEntry:
        calls.append(1)
        return fetched

    assert await storage.fetch_once(fetched.site, fetch) is fetched
    assert calls == [1]
    assert_same(await storage.load(fetched.site), fetched)


@pytest_twisted.ensureDeferred
async def test_len_counts_sites(storage):
    assert len(storage) == 0
    for i in range(5):
        await storage.save(entry(f"https://site{i}.example:443"))
    await storage.save(entry("https://site0.example:443", failures=1))
    assert len(storage) == 5


# -- SqliteRobotsStorage -------------------------------------------------------------------


class Stats:
    def __init__(self) -> None:
        self.values: dict[str, int] = {}

    def inc_value(self, key: str, count: int = 1) -> None:
        self.values[key] = self.values.get(key, 0) + count


def warnings_about(caplog, level: int = logging.WARNING) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "scrapy_robots.cache.sqlite" and r.levelno >= level]


def moved_aside(path: Path) -> list[Path]:
    """The files moved aside (their -wal and -shm apart)."""
    siblings = path.parent.iterdir()
    return sorted(p for p in siblings if p.name.startswith(path.name + ".") and not p.name.endswith(("-wal", "-shm")))


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """The result of a SQLite storage's coroutine, which never waits (sqlite3 is
    synchronous), from a test that is not async."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    raise AssertionError("the storage waited")


def fill(path: Path, sites: int, body_size: int = 2000) -> None:
    """A real, whole file of ``sites`` entries, closed."""
    store = SqliteRobotsStorage(path)
    for i in range(sites):
        run(store.save(entry(f"https://site{i}.example:443", body=os.urandom(body_size))))
    run(store.close())


@pytest_twisted.ensureDeferred
async def test_entries_survive_close_and_reopen(tmp_path):
    path = tmp_path / "robotstxt.sqlite3"
    first = SqliteRobotsStorage(path)
    saved = [entry(f"https://site{i}.example:443", failures=i) for i in range(50)]
    for e in saved:
        await first.save(e)
    await first.close()
    second = SqliteRobotsStorage(path)
    assert len(second) == 50
    for e in saved:
        assert_same(await second.load(e.site), e)
    await second.close()


def test_a_crashed_process_loses_nothing_saved(tmp_path):
    # The process dies (os._exit: no close, no atexit, no finaliser) right after its saves.
    path = tmp_path / "robotstxt.sqlite3"
    script = f"""
import asyncio, os, sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
import test_storage
from test_storage import entry
test_storage.NOW = {NOW!r}
from scrapy_robots.cache.sqlite import SqliteRobotsStorage
store = SqliteRobotsStorage({str(path)!r})
async def main():
    for i in range(100):
        await store.save(entry(f"https://site{{i}}.example:443"))
asyncio.run(main())
os._exit(0)
"""
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
    assert (tmp_path / "robotstxt.sqlite3-wal").exists()  # not checkpointed: nobody closed it
    store = SqliteRobotsStorage(path)
    assert len(store) == 100
    assert_same(run(store.load("https://site99.example:443")), entry("https://site99.example:443"))
    run(store.close())


@pytest_twisted.ensureDeferred
async def test_two_storages_share_one_file(tmp_path):
    # Two crawlers given the same ROBOTSTXT_CACHE_PATH.
    path = tmp_path / "shared.sqlite3"
    one, two = SqliteRobotsStorage(path), SqliteRobotsStorage(path)
    await one.save(entry("https://a.example:443"))
    await two.save(entry("https://b.example:443"))
    assert await two.load("https://a.example:443") is not None
    assert await one.load("https://b.example:443") is not None
    await one.close()
    await two.close()


# Each process says it is ready, waits for "go", opens the file, saves, and prints what
# the storage logged.
_OPEN_AT_ONCE = """
import logging, os, sys, time
from scrapy_robots.cache.sqlite import SqliteRobotsStorage
logging.basicConfig(level=logging.WARNING, stream=sys.stdout, format="%(levelname)s %(message)s")
path, go = sys.argv[1], sys.argv[2]
open(f"{go}.ready.{os.getpid()}", "w").close()
while not os.path.exists(go):
    time.sleep(0.0005)
store = SqliteRobotsStorage(path)
store._run(lambda db: db.execute("INSERT INTO robots VALUES (?, '{}', NULL, 1e12)", (str(os.getpid()),)))
"""


def test_crawls_sharing_a_new_file_start_together(tmp_path):
    # Three crawls with the same ROBOTSTXT_CACHE_PATH create it at the same moment: none
    # may find "table robots already exists" and go on without the disk.
    for attempt in range(5):
        path, go = tmp_path / f"shared{attempt}.sqlite3", tmp_path / f"go{attempt}"
        processes = [
            subprocess.Popen(
                [sys.executable, "-c", _OPEN_AT_ONCE, str(path), str(go)], stdout=subprocess.PIPE, text=True
            )
            for _ in range(3)
        ]
        deadline = time.monotonic() + 60
        while len(list(tmp_path.glob(f"go{attempt}.ready.*"))) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        go.touch()
        logged = [process.communicate(timeout=60)[0] for process in processes]
        assert logged == ["", "", ""]
        db = sqlite3.connect(path)
        assert db.execute("SELECT COUNT(*) FROM robots").fetchone() == (3,)
        db.close()


def corrupt_random_bytes(path: Path) -> None:
    path.write_bytes(os.urandom(64 * 1024))


def corrupt_truncated(path: Path) -> None:
    fill(path, 400)
    size = path.stat().st_size
    with open(path, "r+b") as f:
        f.truncate(size // 2)


def corrupt_pages(path: Path) -> None:
    # A whole file whose pages, past the first (the header and the schema), are garbage.
    fill(path, 400)
    with open(path, "r+b") as f:
        f.seek(4096 * 3)
        f.write(os.urandom(4096 * 20))


def wrong_version(path: Path) -> None:
    fill(path, 10)
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 41}")
    db.close()


def foreign_database(path: Path) -> None:
    # Somebody's own database at the path (user_version 0, tables of its own).
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE things (id INTEGER PRIMARY KEY, name TEXT)")
    db.execute("INSERT INTO things (name) VALUES ('precious')")
    db.commit()
    db.close()


@pytest.mark.parametrize(
    "damage, suffix",
    [
        (corrupt_random_bytes, "corrupt"),
        (corrupt_truncated, "corrupt"),
        (corrupt_pages, "corrupt"),
        (wrong_version, f"v{SCHEMA_VERSION + 41}"),
        (foreign_database, "v0"),
    ],
    ids=lambda v: getattr(v, "__name__", v),
)
@pytest_twisted.ensureDeferred
async def test_a_damaged_file_is_moved_aside_and_rebuilt(tmp_path, caplog, damage, suffix):
    path = tmp_path / "robotstxt.sqlite3"
    damage(path)
    original = path.read_bytes()
    stats = Stats()
    with caplog.at_level(logging.DEBUG, logger="scrapy_robots.cache.sqlite"):
        store = SqliteRobotsStorage(path, stats=stats)
        assert len(store) == 0
        assert await store.load("https://site1.example:443") is None
        saved = entry("https://after.example:443")
        await store.save(saved)
        assert_same(await store.load(saved.site), saved)
        assert len(store) == 1
    (message,) = warnings_about(caplog)
    assert str(path) in message and "is not usable" in message and "moved to" in message
    (aside,) = moved_aside(path)
    assert aside.name.startswith(f"{path.name}.{suffix}-") and aside.name in message
    assert aside.read_bytes() == original  # kept as it was, for a post-mortem
    assert stats.values == {"robotstxt/cache/storage_errors": 1}
    await store.close()
    # The new file is whole: the next crawl opens it without a word.
    caplog.clear()
    again = SqliteRobotsStorage(path)
    assert_same(await again.load(saved.site), saved)
    assert warnings_about(caplog) == []
    await again.close()


@pytest_twisted.ensureDeferred
async def test_damage_found_mid_crawl(tmp_path, caplog):
    # The file passed the check at open, then broke (a disk error, another program).
    path = tmp_path / "robotstxt.sqlite3"
    fill(path, 2000)
    store = SqliteRobotsStorage(path)  # opened and checked: whole
    with open(path, "r+b") as f:
        f.truncate(4096 * 2)
    with caplog.at_level(logging.WARNING, logger="scrapy_robots.cache.sqlite"):
        found = [await store.load(f"https://site{i}.example:443") for i in range(0, 2000, 50)]
        saved = entry("https://after.example:443")
        await store.save(saved)
        assert_same(await store.load(saved.site), saved)
    # The first pages read gone are found damaged: the file is moved aside, the rest are misses.
    assert found[-1] is None
    (message,) = warnings_about(caplog)
    assert "moved to" in message
    assert len(moved_aside(path)) == 1
    await store.close()


@pytest_twisted.ensureDeferred
async def test_a_save_that_finds_damage_is_kept_in_the_fresh_file(tmp_path, caplog):
    path = tmp_path / "robotstxt.sqlite3"
    fill(path, 2000)
    store = SqliteRobotsStorage(path)
    with open(path, "r+b") as f:
        f.truncate(4096 * 2)
    with caplog.at_level(logging.WARNING, logger="scrapy_robots.cache.sqlite"):
        saved = entry("https://site1500.example:443")
        await store.save(saved)
    assert_same(await store.load(saved.site), saved)
    assert len(warnings_about(caplog)) == 1
    await store.close()


@pytest_twisted.ensureDeferred
async def test_a_file_locked_too_long_is_left_as_it_is(tmp_path, caplog, monkeypatch):
    # Another program holds the write lock past the busy timeout: that save is lost
    # (one warning), the file is not "damaged", and the next save goes through.
    monkeypatch.setattr(sqlite_storage_module, "BUSY_TIMEOUT", 0.05)
    path = tmp_path / "robotstxt.sqlite3"
    stats = Stats()
    store = SqliteRobotsStorage(path, stats=stats)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    with caplog.at_level(logging.WARNING, logger="scrapy_robots.cache.sqlite"):
        await store.save(entry("https://a.example:443"))
        await store.save(entry("https://b.example:443"))
    other.execute("ROLLBACK")
    other.close()
    (message,) = warnings_about(caplog)
    assert "database is locked" in message
    assert stats.values == {"robotstxt/cache/storage_errors": 2}
    assert moved_aside(path) == []
    await store.save(entry("https://c.example:443"))
    assert [await store.load(f"https://{x}.example:443") is not None for x in "abc"] == [False, False, True]
    await store.close()


@pytest_twisted.ensureDeferred
async def test_an_unreadable_row_is_a_miss(tmp_path, caplog):
    path = tmp_path / "robotstxt.sqlite3"
    stats = Stats()
    store = SqliteRobotsStorage(path, stats=stats)
    await store.save(entry("https://good.example:443"))
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("INSERT INTO robots VALUES ('https://bad.example:443', '{\"site\": 1}', NULL, 0)")
    record = _record("https://zlib.example:443")
    db.execute("INSERT INTO robots VALUES ('https://zlib.example:443', ?, x'00ff', 0)", (record,))
    db.close()
    with caplog.at_level(logging.WARNING, logger="scrapy_robots.cache.sqlite"):
        assert await store.load("https://bad.example:443") is None
        assert await store.load("https://zlib.example:443") is None
    assert len(warnings_about(caplog)) == 2
    assert "https://bad.example:443" in warnings_about(caplog)[0]
    assert stats.values == {"robotstxt/cache/storage_errors": 2}
    assert await store.load("https://good.example:443") is not None
    await store.save(entry("https://bad.example:443"))  # the next save replaces the row
    assert await store.load("https://bad.example:443") is not None
    await store.close()


def _record(site: str) -> str:
    from scrapy_robots.cache.entry import record_of

    return record_of(entry(site))


@pytest_twisted.ensureDeferred
async def test_an_unwritable_location_leaves_the_storage_empty(tmp_path, caplog):
    (tmp_path / "afile").write_text("a regular file, not a directory")
    path = tmp_path / "afile" / "robotstxt.sqlite3"
    stats = Stats()
    with caplog.at_level(logging.DEBUG, logger="scrapy_robots.cache.sqlite"):
        store = SqliteRobotsStorage(path, stats=stats)
        for i in range(3):
            await store.save(entry(f"https://site{i}.example:443"))
            assert await store.load(f"https://site{i}.example:443") is None
        assert len(store) == 0
        assert await store.fetch_once("https://x.example:443", _returning(entry("https://x.example:443"))) is not None
        await store.close()
    (message,) = [r.getMessage() for r in caplog.records if r.name == "scrapy_robots.cache.sqlite"]
    assert caplog.records[0].levelno == logging.ERROR
    assert str(path) in message and "ROBOTSTXT_CACHE_PATH" in message
    assert stats.values == {"robotstxt/cache/storage_errors": 1}


def _returning(value: RobotsEntry) -> Callable[[], Any]:
    async def fetch() -> RobotsEntry:
        return value

    return fetch


@pytest_twisted.ensureDeferred
async def test_long_expired_rows_are_pruned_at_open(tmp_path):
    path = tmp_path / "robotstxt.sqlite3"
    store = SqliteRobotsStorage(path)
    await store.save(entry("https://recent.example:443", expires_at=NOW - KEEP_AFTER_EXPIRY + 3600))
    await store.save(entry("https://old.example:443", expires_at=NOW - KEEP_AFTER_EXPIRY - 3600))
    assert len(store) == 2
    await store.close()
    store = SqliteRobotsStorage(path)
    assert await store.load("https://old.example:443") is None
    assert await store.load("https://recent.example:443") is not None
    await store.close()


def test_from_crawler_uses_jobdir_and_closes_on_spider_closed(tmp_path):
    jobdir = tmp_path / "job" / "nested"
    crawler = get_crawler(settings_dict={"JOBDIR": str(jobdir)})
    store = SqliteRobotsStorage.from_crawler(crawler)
    assert store.path == str(jobdir / "robotstxt.sqlite3")
    run(store.save(entry()))
    assert (jobdir / "robotstxt.sqlite3-wal").exists()
    crawler.signals.send_catch_log(signals.spider_closed, spider=None, reason="finished")
    # Closed: the log is checkpointed into the file and removed.
    assert not (jobdir / "robotstxt.sqlite3-wal").exists()
    assert len(SqliteRobotsStorage(jobdir / "robotstxt.sqlite3")) == 1


def test_from_crawler_path_setting(tmp_path):
    path = tmp_path / "a" / "robots.db"
    crawler = get_crawler(settings_dict={"ROBOTSTXT_CACHE_PATH": str(path), "JOBDIR": str(tmp_path)})
    store = SqliteRobotsStorage.from_crawler(crawler)
    assert store.path == str(path) and path.exists()  # ROBOTSTXT_CACHE_PATH wins over JOBDIR
    run(store.close())


def test_from_crawler_without_a_path():
    with pytest.raises(ValueError, match="ROBOTSTXT_CACHE_PATH.*JOBDIR"):
        SqliteRobotsStorage.from_crawler(get_crawler(settings_dict={}))


@pytest_twisted.ensureDeferred
async def test_no_copy_of_the_rows_in_memory(tmp_path):
    # 2,000 sites of 8 KB bodies (16 MB) saved and read back: Python holds none of it
    # (SQLite's own page cache is outside tracemalloc, and bounded at 2 MB by default).
    store = SqliteRobotsStorage(tmp_path / "robotstxt.sqlite3")
    body = b"User-agent: *\nDisallow: /a\n" * 300
    await store.save(entry("https://warm.example:443", body=body))
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(2000):
            await store.save(entry(f"https://site{i}.example:443", body=body))
            await store.load(f"https://site{i}.example:443")
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held < 200_000, held
    await store.close()


# -- MemoryRobotsStorage ------------------------------------------------------------------


@pytest_twisted.ensureDeferred
async def test_memory_storage_keeps_the_most_recently_used_sites():
    evicted: list[str] = []
    store = MemoryRobotsStorage(max_entries=3, on_evict=evicted.append)
    for site in ("https://a:443", "https://b:443", "https://c:443"):
        await store.save(entry(site))
    assert await store.load("https://a:443") is not None  # "a" is now the most recent
    await store.save(entry("https://d:443"))
    await store.save(entry("https://e:443"))
    assert evicted == ["https://b:443", "https://c:443"]
    assert len(store) == 3
    assert await store.load("https://b:443") is None
    for site in ("https://a:443", "https://d:443", "https://e:443"):
        assert await store.load(site) is not None
    await store.save(entry("https://a:443", failures=2))  # an overwrite evicts nobody
    assert len(evicted) == 2 and len(store) == 3
