"""``scrapy robots-key``: the real command, run as a subprocess: a key made, its
directory printed, a directory file checked against the crawl's key (the project's
``ROBOTSTXT_SIGNATURE_KEY`` or ``--key``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scrapy_robots.signing import load_key


@pytest.fixture
def robots_key(tmp_path):
    def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        environ = {k: v for k, v in os.environ.items() if not k.startswith("SCRAPY_")}
        environ.update(env or {})
        return subprocess.run(
            [sys.executable, "-m", "scrapy", "robots-key", *args],
            cwd=tmp_path,
            env=environ,
            capture_output=True,
            text=True,
            timeout=60,
        )

    return run


def test_make_key_then_directory_then_check(robots_key, tmp_path: Path):
    made = robots_key("--make-key", "crawler.pem")
    assert made.returncode == 0, made.stderr
    key = load_key(tmp_path / "crawler.pem")
    assert (tmp_path / "crawler.pem").stat().st_mode & 0o777 == 0o600
    assert json.loads(made.stdout) == {"keys": [{**key.jwk, "kid": key.keyid}]}
    assert key.keyid in made.stderr
    # Twice: the key is never replaced.
    again = robots_key("--make-key", "crawler.pem")
    assert again.returncode == 2 and "never replaced" in again.stderr
    assert load_key(tmp_path / "crawler.pem").keyid == key.keyid
    # The directory of the project's key (a setting), then checked.
    shown = robots_key("-s", "ROBOTSTXT_SIGNATURE_KEY=crawler.pem")
    assert shown.returncode == 0 and json.loads(shown.stdout) == json.loads(made.stdout)
    (tmp_path / "directory.json").write_text(shown.stdout)
    checked = robots_key("--key", "crawler.pem", "--check", "directory.json")
    assert checked.returncode == 0 and f"lists the key {key.keyid}" in checked.stdout


def test_check_finds_what_is_wrong(robots_key, tmp_path: Path):
    robots_key("--make-key", "crawler.pem")
    robots_key("--make-key", "other.pem")
    key, other = load_key(tmp_path / "crawler.pem"), load_key(tmp_path / "other.pem")
    cases = {
        "others.json": ({"keys": [{**other.jwk, "kid": other.keyid}]}, 1, "does not list the key"),
        "badkid.json": ({"keys": [{**key.jwk, "kid": other.keyid}]}, 1, "is not its thumbprint"),
        "nokid.json": ({"keys": [key.jwk]}, 0, "lists the key"),
        "notaset.json": ([key.jwk], 2, "is not a JWK Set"),
    }
    for name, (content, status, said) in cases.items():
        (tmp_path / name).write_text(json.dumps(content))
        result = robots_key("--key", "crawler.pem", "--check", name)
        assert result.returncode == status, (name, result.stdout, result.stderr)
        assert said in result.stdout + result.stderr, name


def test_without_a_key_or_with_a_bad_one(robots_key, tmp_path: Path):
    none = robots_key()
    assert none.returncode == 2 and "no key" in none.stderr
    (tmp_path / "bad.pem").write_text("not a key")
    bad = robots_key("--key", "bad.pem")
    assert bad.returncode == 2 and "neither a PEM key nor a JWK" in bad.stderr


def test_one_directory_for_a_fleet_of_keys(robots_key, tmp_path: Path):
    # Each crawler of a fleet makes its own key; the operator lists their public halves
    # in the one directory (--with: a public JWK, a PEM, a directory printed before), the
    # crawl's key first, each kid its thumbprint, each key once.
    for name in ("a.pem", "b.pem", "c.pem"):
        assert robots_key("--make-key", name).returncode == 0
    a, b, c = (load_key(tmp_path / name) for name in ("a.pem", "b.pem", "c.pem"))
    (tmp_path / "b.json").write_text(robots_key("--key", "b.pem").stdout)  # b's published directory
    (tmp_path / "c.pub.json").write_text(json.dumps(c.jwk))  # c's public JWK, no kid
    shown = robots_key("--key", "a.pem", "--with", "b.json", "--with", "c.pub.json", "--with", "a.pem")
    assert shown.returncode == 0, shown.stderr
    listed = json.loads(shown.stdout)["keys"]
    assert listed == [{**k.jwk, "kid": k.keyid} for k in (a, b, c)]
    assert all("d" not in entry for entry in listed)
    (tmp_path / "fleet.json").write_text(shown.stdout)
    # Each crawler's check says which of the directory's keys is its own.
    for position, name in enumerate(("a.pem", "b.pem", "c.pem"), 1):
        checked = robots_key("--key", name, "--check", "fleet.json")
        own = load_key(tmp_path / name).keyid
        assert checked.returncode == 0, checked.stderr
        assert checked.stdout == f"fleet.json: lists the key {own} (key {position} of 3)\n"
    # A crawler not in it: not listed. A --with that holds no key: one line, status 2.
    assert robots_key("--make-key", "d.pem").returncode == 0
    missing = robots_key("--key", "d.pem", "--check", "fleet.json")
    assert (
        missing.returncode == 1 and "does not list the key" in missing.stdout and "(3 other key(s))" in missing.stdout
    )
    (tmp_path / "empty.json").write_text('{"keys": []}')
    for bad, said in (("empty.json", "holds no Ed25519 key"), ("nowhere.pem", "cannot be read")):
        result = robots_key("--key", "a.pem", "--with", bad)
        assert result.returncode == 2 and result.stdout == ""
        assert result.stderr.startswith(f"scrapy robots-key: --with: '{bad}'") and said in result.stderr, result.stderr


def test_a_fleets_directory_signed_by_the_crawls_key(robots_key, tmp_path: Path):
    robots_key("--make-key", "a.pem")
    robots_key("--make-key", "b.pem")
    a, b = load_key(tmp_path / "a.pem"), load_key(tmp_path / "b.pem")
    shown = robots_key("--key", "a.pem", "--with", "b.pem", "--authority", "crawler.example", "--body", "d.json")
    assert shown.returncode == 0, shown.stderr
    body = (tmp_path / "d.json").read_bytes()
    assert json.loads(body)["keys"] == [{**k.jwk, "kid": k.keyid} for k in (a, b)]
    headers = dict(line.split(": ", 1) for line in shown.stdout.splitlines())
    assert f'keyid="{a.keyid}"' in headers["Signature-Input"]
    # http-message-signatures checks it (the helper of test_signing_binding.py).
    from test_signing_binding import verified

    [result] = verified(a, headers, body, "https://crawler.example")
    assert result.parameters["keyid"] == a.keyid


def test_with_and_check_do_not_mix(robots_key, tmp_path: Path):
    robots_key("--make-key", "a.pem")
    result = robots_key("--key", "a.pem", "--with", "a.pem", "--check", "d.json")
    assert result.returncode == 2 and "--with lists more keys in the directory printed" in result.stderr
