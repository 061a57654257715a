"""The compliance record (issue #34, part 2): every policy file version a crawl saw, each
decision with the version that made it, read back with warcio and asked with
``scrapy robots --record`` without the network; through a pause and resume (JOBDIR), a
robots.txt change in between, and a crash."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest_twisted
from crawling import RecordingSpider, crawl, stat
from servers import body
from warcio.archiveiterator import ArchiveIterator

from scrapy_robots.record.reader import Record

ROBOTS = "User-agent: *\nDisallow: /private\n"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class ProvenanceSpider(RecordingSpider):
    """Keeps what each response's meta says of the robots.txt version that governed it."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.versions: dict[str, dict] = {}

    def parse(self, response):
        super().parse(response)
        self.versions[response.url] = response.meta.get("robotstxt_version")


def warc_records(folder: Path) -> list[tuple[str, str, bytes]]:
    records = []
    for path in sorted(folder.glob("*.warc.gz")):
        with path.open("rb") as stream:
            for record in ArchiveIterator(stream):
                records.append((record.rec_type, record.rec_headers.get_header("WARC-Target-URI"), record.content_stream().read()))
    return records


def robots(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "robots", "--record", str(folder), *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=folder.parent,
    )


@pytest_twisted.ensureDeferred
async def test_a_crawl_records_each_version_and_each_decision_and_the_response_carries_its_version(serve, tmp_path):
    parsed = serve(body(ROBOTS))
    denied = serve(body("no", 403))
    missing = serve(body("not here", 404))
    urls = [f"{parsed.url}/a", f"{parsed.url}/private/b", f"{denied.url}/c", f"{missing.url}/d"]
    folder = tmp_path / "record"
    crawler = await crawl(urls, ProvenanceSpider, ROBOTSTXT_RECORD=str(folder))
    assert sorted(crawler.spider.downloaded) == [f"{parsed.url}/a", f"{missing.url}/d"]
    # The response knows the version that let it through.
    assert crawler.spider.versions[f"{parsed.url}/a"]["sha256"] == sha(ROBOTS)
    assert crawler.spider.versions[f"{missing.url}/d"]["sha256"] == sha("not here")
    # The WARC, read by warcio: a request, a response and a metadata record per robots.txt.
    records = warc_records(folder)
    responses = {uri: payload for kind, uri, payload in records if kind == "response"}
    assert responses == {
        f"{parsed.url}/robots.txt": ROBOTS.encode(),
        f"{denied.url}/robots.txt": b"no",
        f"{missing.url}/robots.txt": b"not here",
    }
    assert [kind for kind, _, _ in records].count("request") == 3
    metadata = [json.loads(payload) for kind, _, payload in records if kind == "metadata"]
    assert sorted(m["action"] for m in metadata) == ["allow", "deny", "parse"]
    # Every decision, with the version that made it.
    record = Record([folder])
    rows = {row["url"]: row for row in record.decisions}
    assert set(rows) == set(urls)
    assert rows[f"{parsed.url}/a"]["allowed"] and rows[f"{parsed.url}/a"]["robots"] == sha(ROBOTS)
    assert not rows[f"{parsed.url}/private/b"]["allowed"]
    assert rows[f"{parsed.url}/private/b"]["reason"] == "forbidden"
    assert rows[f"{denied.url}/c"]["reason"] == "denied/deny_all"
    assert rows[f"{missing.url}/d"]["by"] == "status policy: HTTP 404 -> allow"
    assert stat(crawler, "robotstxt/record/decisions") == 4
    assert stat(crawler, "robotstxt/record/versions/robots") == 3
