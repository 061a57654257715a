"""What the user pages promise about themselves: every setting the code reads is on the
settings page, no page sends a reader to a file that is not in the package they
installed (the test suite, the benchmark scripts), and the pages show the lines to
write. (The Sphinx build, warnings as errors, is tests/test_packaging.py's, from the sdist.)"""

from __future__ import annotations

import ast
import configparser
import re
from pathlib import Path

import scrapy_robots.parsers

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = (ROOT / "README.md").read_text()
SETTING = re.compile(r"\bROBOTSTXT_[A-Z0-9_]*[A-Z0-9]\b")


def _settings_the_code_reads() -> set[str]:
    """Every ``ROBOTSTXT_*`` name in a string of the package: the settings it reads, and
    the names its messages tell the user to set."""
    names: set[str] = set()
    for path in (ROOT / "scrapy_robots").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                names.update(SETTING.findall(node.value))
    return names


def _pages() -> dict[str, str]:
    return {path.name: path.read_text() for path in sorted(DOCS.glob("*.rst"))}


def test_every_setting_the_code_reads_is_on_the_settings_page():
    names = _settings_the_code_reads()
    assert {"ROBOTSTXT_PARSER", "ROBOTSTXT_RFC9309_PRECEDENCE", "ROBOTSTXT_USAGE_MODE"} <= names
    page = (DOCS / "settings.rst").read_text()
    missing = sorted(name for name in names if f"``{name}``" not in page)
    assert not missing, f"docs/settings.rst does not list {missing}"


def test_no_page_cites_a_file_of_the_test_suite():
    # The test suite is not what a user installs: a page says what was tested, in words.
    pages = {**_pages(), "README.md": (ROOT / "README.md").read_text()}
    cited = {name: re.findall(r"\btests/[\w./:-]+", text) for name, text in pages.items()}
    assert not {name: paths for name, paths in cited.items() if paths}


def test_the_benchmarks_have_one_page_and_it_is_in_the_toctree():
    pages = _pages()
    assert "bench/" in pages["benchmarks.rst"]
    elsewhere = {name: re.findall(r"\bbench/[\w./-]+", text) for name, text in pages.items()}
    del elsewhere["benchmarks.rst"]
    assert not {name: paths for name, paths in elsewhere.items() if paths}
    toctree = pages["index.rst"].split(".. toctree::", 1)[1].split()
    assert "benchmarks" in toctree


def test_choosing_a_parser_shows_the_setting_line():
    page = (DOCS / "choosing-a-parser.rst").read_text()
    lines = re.findall(r'^\s*#?\s*ROBOTSTXT_PARSER = "scrapy_robots\.parsers\.(\w+)"', page, re.MULTILINE)
    assert "RFC9309Parser" in lines and "ProtegoParser" in lines
    for name in lines:
        assert name in scrapy_robots.parsers.__all__, name


#: Misspellings the pages show on purpose, as the start-up warning names them.
MISSPELT = {"ROBOTSTXT_RECORDS": "ROBOTSTXT_RECORD", "ROBOTSTXT_CRAWL_DELAYS": "ROBOTSTXT_CRAWL_DELAY"}


def test_every_setting_a_page_names_is_one_the_code_reads():
    from scrapy_robots.settings.startup import nearest_setting

    known = _settings_the_code_reads()
    pages = {**_pages(), "README.md": (ROOT / "README.md").read_text()}
    unknown = {name: sorted(set(SETTING.findall(text)) - known - set(MISSPELT)) for name, text in pages.items()}
    assert not {name: names for name, names in unknown.items() if names}
    for wrong, meant in MISSPELT.items():  # each shown as what it is: an unknown name and its nearest
        assert wrong not in known and nearest_setting(wrong) == meant


def test_the_readme_links_the_troubleshooting_page_and_it_answers_the_three_questions():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Documentation", 1)[1].split("\n## ", 1)[0]
    assert "`docs/troubleshooting.rst`" in section
    toctree = (DOCS / "index.rst").read_text().split(".. toctree::", 1)[1].split()
    assert "troubleshooting" in toctree
    page = (DOCS / "troubleshooting.rst").read_text()
    for question in (
        "Why was my URL denied?",
        "Why is my crawl still open?",
        "Why was robots.txt fetched twice?",
    ):
        assert f"\n{question}\n{'-' * len(question)}\n" in page, question
    for answer in ("scrapy robots", "--compare", "--lint", "ROBOTSTXT_UNREACHABLE_RETRY_TIMES", "ROBOTSTXT_CACHE_TTL"):
        assert answer in page, answer
    # The log lines the page tells the reader to look for are the ones the crawl writes.
    code = "".join(path.read_text() for path in (ROOT / "scrapy_robots").rglob("*.py"))
    for line in (
        "they hold the crawl open until about",
        "restored from storage (fetched",
        "every robots.txt is fetched twice and a request must pass both",
        "(redirected to ",
    ):
        assert line in page and line in code, line


def test_the_index_says_401_and_403_deny_by_default_and_how_to_follow_the_rfc():
    # Issue #30: RFC 9309 reads 401/403 as "unavailable" (allow); the default denies.
    intro = " ".join((DOCS / "index.rst").read_text().split(".. toctree::", 1)[0].split())
    assert "401/403/404/5xx robots.txt responses the way the standard says" not in intro
    assert "401/403 deny everything" in intro
    assert '``ROBOTSTXT_STATUS_POLICY = "rfc9309"``' in intro
    assert "``ROBOTSTXT_STATUS_POLICY``" in (DOCS / "settings.rst").read_text()


def _extras() -> dict[str, str]:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    return dict(config["options.extras_require"])


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_the_readme_builds_the_docs_with_what_conf_py_needs():
    # Issue #48: `pip install sphinx` alone left out the theme docs/conf.py names.
    section = README.split("## Documentation", 1)[1].split("\n## ", 1)[0]
    assert 'pip install "scrapy-robots[docs]"' in section
    assert "python -m sphinx -b html docs docs/_build/html" in section
    conf = ast.parse((DOCS / "conf.py").read_text())
    theme = next(
        node.value.value
        for node in conf.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "html_theme"
    )
    requirements = [line.strip() for line in _extras()["docs"].splitlines()]
    wanted = {_normalized(re.split(r"[<>=!~ ]", line, maxsplit=1)[0]) for line in requirements if line}
    assert {"sphinx", _normalized(theme)} <= wanted


def test_the_install_page_is_in_the_toctree_with_every_extra_and_the_reppy_recipe():
    toctree = (DOCS / "index.rst").read_text().split(".. toctree::", 1)[1].split()
    assert "install" in toctree
    page = (DOCS / "install.rst").read_text()
    for extra in set(_extras()) - {"test", "typing"}:
        assert f"``{extra}``" in page, extra
    assert 'pip install "scrapy-robots[docs]"' in page
    assert "--no-build-isolation" in page and ".. _install-reppy:" in page
    assert "Supported versions\n------------------\n" in page


def _conf_value(name: str) -> object:
    conf = ast.parse((DOCS / "conf.py").read_text())
    for node in conf.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        if isinstance(target, ast.Name) and target.id == name and node.value is not None:
            return ast.literal_eval(node.value)
    raise KeyError(name)


def test_the_docs_build_nitpicky_and_ignore_nothing_of_the_package():
    # Issue #48: 32 references (RobotParser, which the README says to subclass, among them)
    # rendered as plain text. Every reference is checked; those Sphinx cannot resolve without
    # intersphinx (no network) are Scrapy's and the standard library's, never ours.
    assert _conf_value("nitpicky") is True
    ignored = _conf_value("nitpick_ignore")
    assert ignored and not [target for _, target in ignored if "scrapy_robots" in target]
    docs_target = (ROOT / "Makefile").read_text().split("\ndocs:", 1)[1].split("\n\n", 1)[0]
    assert " -n -W " in docs_target
    api = (DOCS / "api.rst").read_text()
    for name in (
        "scrapy_robots.parsers.RobotParser",
        "scrapy_robots.RobotsTxtMiddleware",
        "scrapy_robots.Addon",
        "scrapy_robots.cache.RobotsStorage",
        "scrapy_robots.record.reader.Record",
    ):
        assert f":: {name}\n" in api, name
    toctree = (DOCS / "index.rst").read_text().split(".. toctree::", 1)[1].split()
    assert "api" in toctree
