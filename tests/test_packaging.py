"""What a user who installs from the package index reads: the README's install lines,
the extras, where the docs are; and the docs travel with the source distribution."""

from __future__ import annotations

import configparser
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def _extras() -> set[str]:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    return set(config["options.extras_require"]) - {"test", "docs", "typing"}


def test_the_readme_says_how_to_install_without_a_checkout():
    assert re.search(r"^pip install scrapy-robots$", README, re.MULTILINE)


def test_the_readme_installs_each_extra():
    for extra in _extras() - {"reppy"}:
        assert f'pip install "scrapy-robots[{extra}]"' in README, extra
    # reppy's extra does not build on Python 3.11: the README says so and where the recipe is.
    assert 'pip install "scrapy-robots[reppy]"` fails' in README
    assert "--no-build-isolation" in README


def test_the_readme_says_where_the_docs_are_and_they_are_there():
    section = README.split("## Documentation", 1)[1].split("\n## ", 1)[0]
    named = re.findall(r"`(docs/[\w./-]+\.rst)`", section)
    assert "docs/index.rst" in named and "docs/settings.rst" in named
    for path in named:
        assert (ROOT / path).is_file(), path
    assert "python -m sphinx" in section


def test_the_source_distribution_carries_the_docs():
    manifest = (ROOT / "MANIFEST.in").read_text().splitlines()
    assert "graft docs" in manifest and "prune docs/_build" in manifest
