"""Web Bot Auth in a real fleet (#51): two `scrapy crawl` processes sharing one Redis
(scrapy-redis's queue, the fleet's robots.txt and pace), each signing with its own key,
both keys listed in the one directory that ``scrapy robots-key --with`` prints. Two sites
verify every request against that directory (tests/servers.py, ``SignatureChecked``:
http-message-signatures). Every request of both crawlers verifies, each crawler's with its
own key; and nothing of either private key is in Redis at any time of the crawl."""

from __future__ import annotations

import base64
import json
import os
import re
import sys
from pathlib import Path

import pytest_twisted
import redis as redis_py
from fleet import start_crawler
from servers import SignatureChecked, body, page
from twisted.internet import reactor
from twisted.internet.defer import DeferredList
from twisted.internet.task import deferLater
from twisted.internet.utils import getProcessOutputAndValue

from scrapy_robots.signing import make_key
from scrapy_robots.signing.keys import SigningKey, b64url, public_keys

AGENT = "https://fleet.example/.well-known/http-message-signatures-directory"
PAGES = 8  # per site


def key_material(key: SigningKey) -> dict[str, bytes]:
    """Every form the private key could take in a stored value: the PEM file's body (and
    each of its lines), its raw 32 bytes as they are, in hex, base64 and base64url (the
    JWK's ``d``)."""
    from cryptography.hazmat.primitives import serialization

    raw = key.private.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    with open(key.source, "rb") as f:
        pem_lines = [line for line in f.read().splitlines() if line and not line.startswith(b"-----")]
    forms = {
        "raw": raw,
        "hex": raw.hex().encode(),
        "base64": base64.b64encode(raw),
        "base64 unpadded": base64.b64encode(raw).rstrip(b"="),
        "jwk d": b64url(raw).encode(),
        "pem body": b"".join(pem_lines),
    }
    forms.update({f"pem line {i}": line for i, line in enumerate(pem_lines)})
    return forms


def redis_contents(client: redis_py.Redis) -> dict[bytes, list[bytes]]:
    """Every key of the Redis and what it holds: its DUMP and its values read by type."""
    seen: dict[bytes, list[bytes]] = {}
    for name in client.scan_iter(count=1000):
        kind = client.type(name).decode()
        values: list[bytes] = [client.dump(name) or b""]
        if kind == "string":
            values.append(client.get(name) or b"")
        elif kind == "hash":
            values += [part for pair in client.hgetall(name).items() for part in pair]
        elif kind == "list":
            values += client.lrange(name, 0, -1)
        elif kind == "set":
            values += list(client.smembers(name))
        elif kind == "zset":
            values += [member for member, _ in client.zrange(name, 0, -1, withscores=True)]
        elif kind == "stream":
            values += [json.dumps(entry, default=repr).encode() for entry in client.xrange(name)]
        seen[name] = values
    return seen


def leaks(contents: dict[bytes, list[bytes]], material: dict[str, bytes]) -> list[str]:
    return [
        f"{form} in {name!r}"
        for name, values in contents.items()
        for form, secret in material.items()
        for text in [name, *values]
        if secret in text
    ]


def test_the_leak_detector_finds_a_key_in_any_kind_of_value(redis, tmp_path):
    # The check below must be able to fail: a key's material planted in each kind of
    # value (and in a key's name) is found, in each of its forms.
    key = make_key(tmp_path / "planted.pem")
    material = key_material(key)
    client = redis_py.Redis.from_url(redis.url)
    try:
        client.hset("planted:hash", "field", b"x" + material["jwk d"] + b"x")
        client.zadd("planted:zset", {b"..." + material["pem body"]: 1})
        client.rpush("planted:list", b"\x00" + material["raw"])
        client.set(b"planted:" + material["hex"], b"1")
        found = leaks(redis_contents(client), material)
        assert any(f.startswith("jwk d in b'planted:hash'") for f in found)
        assert any(f.startswith("pem body in b'planted:zset'") for f in found)
        assert any(f.startswith("raw in b'planted:list'") for f in found)
        assert any(f.startswith("hex in b'planted:") for f in found)
    finally:
        client.flushdb()
        client.close()


async def fleet_directory(tmp_path: Path) -> Path:
    """The one directory of both crawlers' keys, as the operator prints it."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("SCRAPY_")}
    out, err, code = await getProcessOutputAndValue(
        sys.executable,
        ["-m", "scrapy", "robots-key", "--key", "a.pem", "--with", "b.pem"],
        env=environ,
        path=str(tmp_path),
    )
    assert code == 0, err
    (tmp_path / "directory.json").write_bytes(out)
    return tmp_path / "directory.json"


@pytest_twisted.ensureDeferred
async def test_two_crawlers_each_sign_with_its_own_key_listed_in_one_directory(serve, redis, tmp_path):
    a, b = make_key(tmp_path / "a.pem"), make_key(tmp_path / "b.pem")
    keys = public_keys(await fleet_directory(tmp_path))
    assert set(keys) == {a.keyid, b.keyid}
    checked: list = []

    def verifying(handler):
        return SignatureChecked(handler, keys, checked=checked)

    sites = [serve(verifying(body("User-agent: *\nCrawl-delay: 0.1\n")), {}) for _ in range(2)]
    for site in sites:
        site.pages = verifying(page)
    urls = [f"{site.url}/p{i}" for i in range(PAGES) for site in sites]

    client = redis_py.Redis.from_url(redis.url)
    handles = [
        start_crawler(urls[::2], redis.url, ROBOTSTXT_SIGNATURE_KEY=a.source, ROBOTSTXT_SIGNATURE_AGENT=AGENT),
        start_crawler(urls[1::2], redis.url, ROBOTSTXT_SIGNATURE_KEY=b.source, ROBOTSTXT_SIGNATURE_AGENT=AGENT),
    ]
    # Redis read while the fleet crawls (the locks, the pace, the queue as they are then)
    # and once more after.
    snapshots: list[dict[bytes, list[bytes]]] = []
    done = DeferredList([h.done for h in handles])
    while not done.called:
        snapshots.append(redis_contents(client))
        await deferLater(reactor, 0.1, lambda: None)
    results = [result for _, result in await done]
    snapshots.append(redis_contents(client))
    client.close()

    for result in results:
        assert result["exit"] == 0, result["log"][-3000:]
        assert result["failed"] == {} and result["ignored"] == {}, (result["failed"], result["ignored"])
    assert sorted(u for r in results for u in r["downloaded"]) == sorted(urls)
    # Every request of both crawlers verified against the one directory, robots.txt's too
    # (once per site for the fleet).
    assert [f"{c.authority}{c.path}: {c.why}" for c in checked if not c.ok] == []
    assert len(checked) == len(urls) + len(sites)
    assert sorted(c.path for c in checked if c.path == "/robots.txt") == ["/robots.txt"] * len(sites)
    # Each crawler's requests carry its own keyid.
    by_page = {f"http://{c.authority}{c.path}": c.keyid for c in checked}
    for result, key in zip(results, (a, b)):
        assert result["downloaded"], "both crawlers took part"
        assert {by_page[url] for url in result["downloaded"]} == {key.keyid}
        # The count is added when the spider closes, after the spider wrote its own
        # stats: read from Scrapy's stats dump in the log.
        [signed] = re.findall(r"'robotstxt/signature/signed': (\d+)", result["log"])
        assert int(signed) == sum(1 for c in checked if c.keyid == key.keyid)
    assert {c.keyid for c in checked} == {a.keyid, b.keyid}
    # Nothing of either private key went into Redis, at any time read.
    assert any(snapshot for snapshot in snapshots), "the fleet kept nothing in Redis: nothing was checked"
    material = {
        f"{who} {form}": secret for who, key in (("a", a), ("b", b)) for form, secret in key_material(key).items()
    }
    found = sorted({leak for snapshot in snapshots for leak in leaks(snapshot, material)})
    assert found == [], found
