"""SqliteRobotsStorage: every site's robots.txt outcome in one SQLite file.

The default storage of a crawl with a ``JOBDIR`` (``<JOBDIR>/robotstxt.sqlite3``), or
wherever ``ROBOTSTXT_CACHE_PATH`` says: a resumed or restarted crawl fetches no
robots.txt again within its lifetime. One row per site; nothing of it is held in
memory beyond SQLite's own page cache (2 MB by default).

Each ``save`` is one committed transaction in WAL mode with ``synchronous=NORMAL``: a
crash of the process loses nothing saved, a power loss at most the last saves, and
SQLite never leaves a corrupt file behind either way. A file that is damaged anyway
(corrupt, truncated, not a database, another schema) is moved aside and the storage
starts afresh; a file that cannot be created leaves the storage empty. Neither raises
into the crawl.
"""

from __future__ import annotations

import errno
import logging
import os
import sqlite3
import time
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from scrapy_robots.cache.entry import RobotsEntry, entry_from_record, record_of
from scrapy_robots.cache.storage import RobotsStorage
from scrapy_robots.settings.errors import SettingError

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: ``PRAGMA user_version`` of the files this module writes. A file with another one is
#: moved aside and a new one made: robots.txt is cheap to fetch again, a migration is not.
SCHEMA_VERSION = 1

#: Rows expired longer than this are deleted when the file is opened. Until then an
#: expired row still serves: it carries an unreachable site's failure count and the last
#: good body (RFC 9309 2.4; ROBOTSTXT_UNREACHABLE_ALLOW_AFTER defaults to 30 days too).
KEEP_AFTER_EXPIRY = 30 * 24 * 3600.0

# Long enough to wait for another crawler writing to the same file (a write takes tens
# of microseconds), short enough not to stall the reactor long if that crawler hangs.
BUSY_TIMEOUT = 1.0
#: Seconds a new crawl keeps trying to open a file that other crawls are creating.
OPEN_PATIENCE = 5.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS robots (
    site TEXT PRIMARY KEY,
    record TEXT NOT NULL,   -- the entry's fields as JSON (entry.record_of)
    body BLOB,              -- zlib-compressed; NULL when the entry has none
    expires_at REAL NOT NULL
)"""

# SQLite's primary result codes that mean "this file is damaged or not a database"
# (others, such as a full disk or a lock held too long, leave the file as it is).
_SQLITE_CORRUPT = 11
_SQLITE_NOTADB = 26


class _Unusable(Exception):
    """The file is not a whole robots.txt database of ours: move it aside."""

    def __init__(self, reason: str, suffix: str = "corrupt"):
        super().__init__(reason)
        self.suffix = suffix


class SqliteRobotsStorage(RobotsStorage):
    """``ROBOTSTXT_CACHE_STORAGE = "scrapy_robots.cache.SqliteRobotsStorage"``."""

    def __init__(self, path: str | os.PathLike[str], stats: Any = None):
        self.path = os.fspath(path)
        self.stats = stats
        self._db: sqlite3.Connection | None = None
        self._failed = False  # the file cannot be had: behave as an empty storage
        self._warned: set[str] = set()
        self._connection()  # problems with the file show at start-up, not mid-crawl

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SqliteRobotsStorage:
        from scrapy import signals

        from scrapy_robots.settings.config import RobotsConfig

        path = RobotsConfig.of(crawler).cache_path
        if path is None:
            raise SettingError(
                "ROBOTSTXT_CACHE_STORAGE = SqliteRobotsStorage needs a file: set ROBOTSTXT_CACHE_PATH "
                "(e.g. 'robotstxt.sqlite3') or JOBDIR"
            )
        storage = cls(path, stats=crawler.stats)
        crawler.signals.connect(storage._spider_closed, signal=signals.spider_closed)
        return storage

    # -- the interface -------------------------------------------------------------------

    async def load(self, site: str) -> RobotsEntry | None:
        return self.load_now(site)

    def load_now(self, site: str) -> RobotsEntry | None:
        # SQLite answers from its page cache or the disk in the reactor's thread, as
        # load() always did: a read costs tens of microseconds.
        row = self._run(lambda db: db.execute("SELECT record, body FROM robots WHERE site = ?", (site,)).fetchone())
        if row is None:
            return None
        record, body = row
        try:
            entry = entry_from_record(record, None if body is None else zlib.decompress(body))
        except (ValueError, zlib.error) as exc:
            # The site's next save replaces the row.
            self._inc_errors()
            logger.warning(
                "Ignoring an unreadable robots.txt row for %(site)s in %(path)s: %(error)s",
                {"site": site, "path": self.path, "error": exc},
            )
            return None
        return entry if entry.site == site else None

    async def save(self, entry: RobotsEntry) -> None:
        body = None if entry.body is None else zlib.compress(entry.body, 6)
        row = (entry.site, record_of(entry), body, entry.expires_at)
        # Autocommit: the statement is its own transaction, committed when it returns.
        self._run(lambda db: db.execute("INSERT OR REPLACE INTO robots VALUES (?, ?, ?, ?)", row), again=True)

    def describe(self) -> str:
        where = f"in SQLite at {os.path.abspath(self.path)}"
        return f"{where} (it cannot be used: nothing is kept)" if self._failed else where

    async def close(self) -> None:
        """Idempotent; a later ``load`` or ``save`` opens the file again."""
        self._close()

    def __len__(self) -> int:
        row = self._run(lambda db: db.execute("SELECT COUNT(*) FROM robots").fetchone())
        return 0 if row is None else int(row[0])

    def _spider_closed(self) -> None:
        self._close()

    # -- the file ------------------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection | None:
        """The open file, opening it if need be; None when it cannot be had."""
        if self._db is None and not self._failed:
            try:
                self._db = self._open_patiently()
            except _Unusable as unusable:
                self._db = self._replace(unusable)
            except (sqlite3.Error, OSError) as exc:
                self._give_up(f"Cannot open the robots.txt cache {self.path}", exc)
        return self._db

    def _open_patiently(self) -> sqlite3.Connection:
        """:meth:`_open`, tried again while the file is locked: crawls that create the same
        new file at once race for its first locks (WAL set-up, schema), and SQLite answers
        "database is locked" without waiting where waiting could deadlock."""
        deadline = time.monotonic() + OPEN_PATIENCE
        while True:
            try:
                return self._open()
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
            time.sleep(0.02)

    def _open(self) -> sqlite3.Connection:
        """The file, opened, checked, with our schema. Raises :class:`_Unusable`."""
        parent = os.path.dirname(os.path.abspath(self.path))
        try:
            os.makedirs(parent, exist_ok=True)
        except FileExistsError:
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", parent) from None
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, isolation_level=None)
        try:
            _check(db)
            # WAL: a save appends to the log and readers never wait; a crash never
            # corrupts. NORMAL: the log is synced at checkpoints, not at each commit.
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute("DELETE FROM robots WHERE expires_at < ?", (time.time() - KEEP_AFTER_EXPIRY,))
        except sqlite3.Error as exc:
            db.close()
            if _is_damage(exc):
                raise _Unusable(str(exc)) from exc
            raise
        except _Unusable:
            db.close()
            raise
        return db

    def _replace(self, unusable: _Unusable) -> sqlite3.Connection | None:
        """Move the unusable file aside and start a new one; None if even that fails."""
        try:
            aside = self._move_aside(unusable.suffix)
            db = self._open()
        except (sqlite3.Error, OSError, _Unusable) as exc:
            self._give_up(f"The robots.txt cache {self.path} is not usable ({unusable}) and could not be replaced", exc)
            return None
        self._inc_errors()
        logger.warning(
            "The robots.txt cache %(path)s is not usable (%(reason)s): moved to %(aside)s, "
            "starting a new one; its sites' robots.txt will be fetched again",
            {"path": self.path, "reason": unusable, "aside": aside},
        )
        return db

    def _move_aside(self, suffix: str) -> str:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside = f"{self.path}.{suffix}-{stamp}"
        n = 1
        while os.path.exists(aside):
            n += 1
            aside = f"{self.path}.{suffix}-{stamp}-{n}"
        # The -wal and -shm files go with it: a log left behind would be replayed into
        # the new file. The main file last, so that an interrupted move is done again.
        for extra in ("-wal", "-shm", ""):
            if os.path.exists(self.path + extra):
                os.replace(self.path + extra, aside + extra)
        return aside

    def _give_up(self, message: str, exc: BaseException) -> None:
        self._failed = True
        self._inc_errors()
        logger.error(
            "%(message)s: %(error)s. This crawl keeps no robots.txt on disk; set ROBOTSTXT_CACHE_PATH "
            "to a writable file",
            {"message": message, "error": exc},
        )

    def _close(self) -> None:
        db, self._db = self._db, None
        if db is not None:
            try:
                db.close()
            except sqlite3.Error as exc:
                self._trouble(exc)

    # -- running a statement -------------------------------------------------------------

    def _run(self, statement: Callable[[sqlite3.Connection], T], again: bool = False) -> T | None:
        """``statement(connection)``, or None when the storage is out of use. Damage found
        now is handled as at open; ``again`` runs the statement again in the new file."""
        db = self._connection()
        if db is None:
            return None
        try:
            return statement(db)
        except sqlite3.Error as exc:
            if not _is_damage(exc):
                self._trouble(exc)
                return None
            self._db = None
            try:
                db.close()
            except sqlite3.Error:
                pass  # the file is being moved aside
            self._db = self._replace(_Unusable(str(exc)))
        if again and self._db is not None:
            try:
                return statement(self._db)
            except sqlite3.Error as exc:
                self._trouble(exc)
        return None

    def _trouble(self, exc: sqlite3.Error) -> None:
        """An error that leaves the file as it is (a full disk, a lock held too long):
        this load or save is lost, the next one tries again. One warning per kind."""
        self._inc_errors()
        text = str(exc)
        if text in self._warned:
            logger.debug("robots.txt cache %(path)s: %(error)s", {"path": self.path, "error": text})
            return
        self._warned.add(text)
        logger.warning(
            "robots.txt cache %(path)s: %(error)s (counted in robotstxt/cache/storage_errors; "
            "further errors like it are logged at DEBUG)",
            {"path": self.path, "error": text},
        )

    def _inc_errors(self) -> None:
        if self.stats is not None:
            self.stats.inc_value("robotstxt/cache/storage_errors")


def _check(db: sqlite3.Connection) -> None:
    """Create the schema in a new (empty) file; raise :class:`_Unusable` for a file that
    is not ours or not whole."""
    # One read transaction: another crawl sharing the file may be creating it meanwhile.
    db.execute("BEGIN")
    try:
        # A file of random bytes fails here: "file is not a database".
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        if db.in_transaction:
            db.execute("ROLLBACK")
    if not tables and version == 0:
        # IF NOT EXISTS: two crawls sharing a new file may both get here.
        db.executescript(f"BEGIN IMMEDIATE; {_SCHEMA}; PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;")
        return
    if version != SCHEMA_VERSION or "robots" not in tables:
        raise _Unusable(
            f"schema version {version} with tables {sorted(tables)}, expected {SCHEMA_VERSION}", suffix=f"v{version}"
        )
    # A truncated file opens and may read its first pages: read them all. About 0.12 s
    # for 100,000 sites (docs/cache.rst), once per crawl, and no surprise mid-crawl.
    problem = db.execute("PRAGMA quick_check(1)").fetchone()[0]
    if problem != "ok":
        raise _Unusable(f"quick_check: {problem.splitlines()[-1]}")


def _is_damage(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB)
    return type(exc) is sqlite3.DatabaseError  # what sqlite3 raises for those codes
