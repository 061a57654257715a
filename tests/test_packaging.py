"""What a user who installs from the package index reads: the README's install lines,
the extras, where the docs are; and what the built distributions carry: the docs (which
build from the sdist alone), the changelog, the project's URLs, the licence."""

from __future__ import annotations

import configparser
import email.parser
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from processes import copy_checkout

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
# The PEP 517 hook pip and `python -m build` call (setuptools' backend), one process each.
BUILD = """
import sys
from setuptools import build_meta

print("BUILT", getattr(build_meta, sys.argv[1])(sys.argv[2]))
"""


def _extras() -> set[str]:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    return set(config["options.extras_require"]) - {"test", "docs", "typing"}


def test_the_readme_says_how_to_install_without_a_checkout():
    assert re.search(r"^pip install scrapy-robots$", README, re.MULTILINE)


def test_the_readme_says_how_to_install_from_a_checkout_where_the_index_has_no_package():
    section = README.split("## Install", 1)[1].split("\n## ", 1)[0]
    assert re.search(r"^pip install /path/to/scrapy-robots\b", section, re.MULTILINE)
    assert "`pip install .`" in section
    assert "No matching distribution" in section


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


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """As `python -m build` makes them: the sdist from a copy of the sources, the wheel
    from the unpacked sdist; and what the two builds printed."""
    where = tmp_path_factory.mktemp("built")
    source = where / "source"
    copy_checkout(source)
    dist = where / "dist"
    sdist, sdist_output = _build("build_sdist", source, dist)
    with tarfile.open(sdist) as tar:
        tar.extractall(where / "unpacked", filter="data")
    wheel, wheel_output = _build("build_wheel", where / "unpacked" / sdist.name.removesuffix(".tar.gz"), dist)
    return sdist, wheel, sdist_output + wheel_output


def _build(hook: str, source: Path, dist: Path) -> tuple[Path, str]:
    run = subprocess.run(
        [sys.executable, "-c", BUILD, hook, str(dist)], cwd=source, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    name = next(line.split(" ", 1)[1] for line in run.stdout.splitlines() if line.startswith("BUILT "))
    return dist / name, run.stdout + run.stderr


def _sdist_members(sdist: Path) -> set[str]:
    with tarfile.open(sdist) as tar:
        return {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}


def _metadata(built) -> list:
    sdist, wheel, _ = built
    with tarfile.open(sdist) as tar:
        pkg_info = tar.extractfile(f"{sdist.name.removesuffix('.tar.gz')}/PKG-INFO").read().decode()
    with zipfile.ZipFile(wheel) as whl:
        metadata = whl.read(next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    return [email.parser.Parser().parsestr(text) for text in (pkg_info, metadata)]


def test_the_sdist_carries_the_changelog_and_its_docs_build_warning_free(built, tmp_path):
    sdist, _, _ = built
    assert "CHANGELOG.md" in _sdist_members(sdist)
    pytest.importorskip("sphinx")
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp_path, filter="data")
    unpacked = tmp_path / sdist.name.removesuffix(".tar.gz")
    docs = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", "docs", str(tmp_path / "html")],
        cwd=unpacked,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert docs.returncode == 0, docs.stderr
    # The changelog page shows the file: its latest version's heading, say.
    latest = (ROOT / "CHANGELOG.md").read_text().split("\n## ", 1)[1].split()[0]
    assert latest in (tmp_path / "html" / "changelog.html").read_text()


def test_the_metadata_names_the_project_urls(built):
    for metadata in _metadata(built):
        urls = dict(value.split(", ", 1) for value in metadata.get_all("Project-URL") or [])
        assert {"Documentation", "Changelog", "Source", "Issues"} <= set(urls), urls
        assert all(url.startswith("https://") for url in urls.values()), urls


def test_the_licence_is_an_spdx_expression_without_a_deprecated_classifier(built):
    _, _, output = built
    for metadata in _metadata(built):
        assert "BSD-3-Clause" in (metadata.get("License-Expression"), metadata.get("License"))
        assert not [c for c in metadata.get_all("Classifier") or [] if c.startswith("License ::")]
    assert not [line for line in output.splitlines() if "Warning" in line and "licen" in line.lower()], output
