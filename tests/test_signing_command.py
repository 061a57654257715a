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
