"""The compliance record signed (issue #51): with ``ROBOTSTXT_SIGNATURE_KEY``, each record
file a crawl closes has its SHA-256 chained and signed into ``signatures.jsonl``; two
crawls into one folder continue the chain; ``scrapy robots --record DIR --verify`` finds a
one-byte change anywhere (each byte of the manifest, bytes of each record file, the byte
next to each), a file added or removed, a line taken out, and names what changed."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_twisted
from crawling import crawl
from servers import body
from test_stopping import sleep

from scrapy_robots.record.manifest import ADDED, CHANGED, EDITED, MANIFEST, REMOVED, record_files, verify
from scrapy_robots.signing import make_key
from scrapy_robots.signing.keys import directory, public_keys, verifier

AGENT = "https://crawler.example/.well-known/http-message-signatures-directory"
ROBOTS = "User-agent: *\nDisallow: /private\n"


def robots(folder: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "robots", "--record", str(folder), "--verify", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
    )


@pytest.fixture
def key(tmp_path):
    return make_key(tmp_path / "crawler.pem")


async def two_crawls(serve, key, folder: Path, **more) -> list:
    site = serve(body(ROBOTS))
    crawlers = []
    for run in range(2):  # two runs into the same folder: the second continues the chain
        if run:
            await sleep(1.1)  # a crawler's files are named to the second (and pid): the next run's are its own
        urls = [f"{site.url}/a{run}", f"{site.url}/private/b{run}"]
        crawlers.append(
            await crawl(
                urls,
                ROBOTSTXT_RECORD=str(folder),
                ROBOTSTXT_SIGNATURE_KEY=key.source,
                ROBOTSTXT_SIGNATURE_AGENT=AGENT,
                **more,
            )
        )
    return crawlers


def flipped(path: Path, offset: int) -> bytes:
    """Changes one byte of ``path`` (one bit of it), the old bytes returned to put back."""
    data = path.read_bytes()
    changed = bytearray(data)
    changed[offset] ^= 0x01
    path.write_bytes(bytes(changed))
    return data


@pytest_twisted.ensureDeferred
async def test_two_crawls_sign_their_files_into_one_chain_and_it_verifies(serve, key, tmp_path):
    folder = tmp_path / "record"
    crawlers = await two_crawls(serve, key, folder)
    files = record_files(folder)
    assert len(files) == 4  # each crawl: its versions (WARC) and its decisions
    lines = (folder / MANIFEST).read_text().splitlines()
    entries = [json.loads(line) for line in lines]
    first, second = ({e["file"].split(".", 1)[0] for e in half} for half in (entries[:2], entries[2:]))
    assert len(first) == len(second) == 1 and first != second  # each crawl's two files, in turn
    assert sorted(e["file"] for e in entries) == files
    assert [e["n"] for e in entries] == [0, 1, 2, 3]
    assert entries[0]["prev"] is None
    assert all(e["prev"] is not None for e in entries[1:])  # the second crawl's lines follow the first's
    assert {e["keyid"] for e in entries} == {key.keyid}
    assert [c.stats.get_value("robotstxt/record/signed") for c in crawlers] == [2, 2]
    found = verify(folder, verifier(public_keys(key.source)))
    assert found.problems == []
    assert sorted(found.files) == files
    # No secret in the record: neither the private key's bytes nor its PEM.
    secret = key.private.private_bytes_raw()
    pem = Path(key.source).read_bytes()
    for path in folder.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert secret not in data and base64.urlsafe_b64encode(secret).rstrip(b"=") not in data
            assert pem not in data and b"PRIVATE KEY" not in data


@pytest_twisted.ensureDeferred
async def test_a_one_byte_change_anywhere_is_caught_and_named(serve, key, tmp_path):
    folder = tmp_path / "record"
    await two_crawls(serve, key, folder)
    check = verifier(public_keys(key.source))
    manifest = folder / MANIFEST
    # Every byte of the manifest (each line, each newline, the last byte).
    size = manifest.stat().st_size
    for offset in range(size):
        before = flipped(manifest, offset)
        problems = verify(folder, check).problems
        manifest.write_bytes(before)
        assert problems, f"the manifest's byte {offset} changed, unseen"
        assert problems[0].what == EDITED and problems[0].name == MANIFEST, (offset, problems)
    # Bytes of each record file: its first, its last, a middle one, and the byte next to each.
    for name in record_files(folder):
        path = folder / name
        last = path.stat().st_size - 1
        for offset in sorted({0, 1, last // 2, last // 2 + 1, last - 1, last}):
            before = flipped(path, offset)
            problems = verify(folder, check).problems
            path.write_bytes(before)
            assert [(p.what, p.name) for p in problems] == [(CHANGED, name)], (name, offset)
    assert verify(folder, check).problems == []  # all put back: as signed again


@pytest_twisted.ensureDeferred
async def test_verify_names_a_file_added_removed_or_a_line_taken_out(serve, key, tmp_path):
    folder = tmp_path / "record"
    await two_crawls(serve, key, folder)
    check = verifier(public_keys(key.source))
    names = record_files(folder)
    # A file removed; the next one too.
    for name in names[:2]:
        path = folder / name
        data = path.read_bytes()
        path.unlink()
        assert [(p.what, p.name) for p in verify(folder, check).problems] == [(REMOVED, name)]
        path.write_bytes(data)
    # A file added, written as a crawl would name it (a decisions file), then a versions file.
    for name in ("19700101T000000Z-host-1.decisions.jsonl", "19700101T000000Z-host-1.warc.gz"):
        (folder / name).write_bytes(b'{"purposes":[]}\n')
        assert [(p.what, p.name) for p in verify(folder, check).problems] == [(ADDED, name)]
        (folder / name).unlink()
    # A line taken out of the middle: the chain breaks at the next, and its file is not verified.
    manifest = folder / MANIFEST
    kept = manifest.read_bytes()
    lines = kept.splitlines(keepends=True)
    manifest.write_bytes(b"".join(lines[:1] + lines[2:]))
    problems = verify(folder, check).problems
    assert (EDITED, MANIFEST) in [(p.what, p.name) for p in problems]
    assert any("out of the chain" in p.detail for p in problems)
    assert (ADDED, json.loads(lines[1])["file"]) in [(p.what, p.name) for p in problems]
    # The first line taken out: the new first line's prev names a line no longer there.
    manifest.write_bytes(b"".join(lines[1:]))
    assert any("line 1: out of the chain" in p.detail for p in verify(folder, check).problems)
    # Signed with another key: the lines hold, but not for this key.
    manifest.write_bytes(kept)
    other = make_key(tmp_path / "other.pem")
    problems = verify(folder, verifier(public_keys(other.source))).problems
    assert {p.what for p in problems} == {EDITED} and "not one given" in problems[0].detail


@pytest_twisted.ensureDeferred
async def test_the_command_verifies_with_the_key_its_directory_or_the_projects(serve, key, tmp_path):
    folder = tmp_path / "record"
    await two_crawls(serve, key, folder)
    (tmp_path / "directory.json").write_text(json.dumps(directory(key)))
    for given in (["--key", key.source], ["--key", "directory.json"], ["-s", f"ROBOTSTXT_SIGNATURE_KEY={key.source}"]):
        result = robots(folder, *given, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert f"verified: 4 file(s) as signed, the chain whole (key {key.keyid})" in result.stdout
    name = record_files(folder)[1]
    flipped(folder / name, 10)
    result = robots(folder, "--key", "directory.json", "--json", cwd=tmp_path)
    assert result.returncode == 1
    said = json.loads(result.stdout)
    assert said["verified"] is False
    assert [(p["what"], p["file"]) for p in said["problems"]] == [(CHANGED, name)]
    first = json.loads((folder / MANIFEST).read_text().splitlines()[0])["file"]
    flipped(folder / MANIFEST, 3)  # "alg", the first line's first member, becomes "amg"
    result = robots(folder, "--key", key.source, cwd=tmp_path)
    assert result.returncode == 1
    assert f"{MANIFEST}: {EDITED}: line 1: not a manifest line" in result.stdout
    assert f"{first}: {EDITED}: not verified" in result.stdout
    if first != name:
        assert f"{name}: {CHANGED}:" in result.stdout
    # Cannot check: no key at all; a URL with --verify.
    result = robots(folder, cwd=tmp_path)
    assert result.returncode == 2 and "--verify needs the key" in result.stderr
    result = robots(folder, "--key", key.source, "https://example.com/", cwd=tmp_path)
    assert result.returncode == 2 and "takes no URL" in result.stderr


@pytest_twisted.ensureDeferred
async def test_an_unsigned_crawl_writes_no_manifest_and_verify_says_so(serve, tmp_path, key):
    folder = tmp_path / "record"
    site = serve(body(ROBOTS))
    crawler = await crawl([f"{site.url}/a"], ROBOTSTXT_RECORD=str(folder))
    assert not (folder / MANIFEST).exists()
    assert crawler.stats.get_value("robotstxt/record/signed") is None
    problems = verify(folder, verifier(public_keys(key.source))).problems
    assert problems[0].what == EDITED and "not signed" in problems[0].detail
    assert {(p.what, p.name) for p in problems[1:]} == {(ADDED, name) for name in record_files(folder)}


@pytest_twisted.ensureDeferred
async def test_in_json_lines_each_body_is_checked_against_its_name(serve, key, tmp_path):
    folder = tmp_path / "record"
    await two_crawls(serve, key, folder, ROBOTSTXT_RECORD_FORMAT="jsonl")
    check = verifier(public_keys(key.source))
    assert verify(folder, check).problems == []
    [body] = sorted((folder / "bodies").iterdir())  # one robots.txt, both crawls: one body
    for offset in (0, 1):
        before = flipped(body, offset)
        problems = verify(folder, check).problems
        body.write_bytes(before)
        assert [(p.what, p.name) for p in problems] == [(CHANGED, f"bodies/{body.name}")]
