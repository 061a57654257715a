"""The layout keeps its promises: every import path the docs give works, the top level
holds the public names and entry points only, no module imports itself back through
another, and docs/flow.rst's module map names every module there is.

Pure reads of the source tree and the docs (ast, no crawl)."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "scrapy_robots"
DOCS = [*sorted((ROOT / "docs").glob("*.rst")), ROOT / "README.md"]

#: The top level: the public names and the entry points. A module added here is a
#: deliberate change of the public surface; anything else goes into a stage's or a
#: feature's folder (docs/flow.rst).
TOP_LEVEL = {
    "__init__.py",  # scrapy_robots.Addon, .RobotsTxtMiddleware, .UsageMiddleware
    "addon.py",  # ADDONS = {"scrapy_robots.Addon": 0}
    "middleware.py",  # DOWNLOADER_MIDDLEWARES: scrapy_robots.middleware.RobotsTxtMiddleware
    "spidermw.py",  # SPIDER_MIDDLEWARES: scrapy_robots.spidermw.UsageMiddleware
    "verdict.py",  # scrapy_robots.verdict.verdict: the decision, on the crawl's hot path
    "grounds.py",  # scrapy_robots.grounds.grounds: the one answer with its grounds (command, record)
    "decoding.py",  # scrapy_robots.decoding.decode_robotstxt, for parsers of one's own
    "useragent.py",  # scrapy_robots.useragent.product_token, for parsers of one's own
}

#: The paths the issue that moved the modules promised to keep, beside what the docs name.
PROMISED = [
    "scrapy_robots.Addon",
    "scrapy_robots.RobotsTxtMiddleware",
    "scrapy_robots.UsageMiddleware",
    "scrapy_robots.addon.Addon",
    "scrapy_robots.middleware.RobotsTxtMiddleware",
    "scrapy_robots.spidermw.UsageMiddleware",
    "scrapy_robots.parsers.RFC9309Parser",
    "scrapy_robots.parsers.ProtegoParser",
    "scrapy_robots.parsers.PythonParser",
    "scrapy_robots.parsers.RerpParser",
    "scrapy_robots.parsers.ReppyParser",
    "scrapy_robots.parsers.GoogleParser",
    "scrapy_robots.parsers.base.RobotParser",
    "scrapy_robots.cache.MemoryRobotsStorage",
    "scrapy_robots.cache.SqliteRobotsStorage",
    "scrapy_robots.cache.RobotsStorage",
    "scrapy_robots.fleet.RedisRobotsStorage",
    "scrapy_robots.directives.middleware.DirectivesMiddleware",
    "scrapy_robots.directives.cache.NoArchivePolicy",
    "scrapy_robots.verdict.verdict",
    "scrapy_robots.rfc9309.RobotsTxt",
    "scrapy_robots.usage.preference",
    "scrapy_robots.lint.lint_robotstxt",
    "scrapy_robots.commands.robots.Command",
]


def resolve(path: str) -> object:
    """The object a dotted path names: the longest importable module, then attributes."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError as exc:
            if exc.name and not path.startswith(exc.name):
                raise  # a module that exists failed to import something else
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise ImportError(path)


def documented_paths() -> list[str]:
    found: set[str] = set()
    for doc in DOCS:
        found.update(re.findall(r"\bscrapy_robots(?:\.\w+)+", doc.read_text(encoding="utf-8")))
    return sorted(found)


@pytest.mark.parametrize("path", sorted({*documented_paths(), *PROMISED}))
def test_every_documented_import_path_works(path):
    assert resolve(path) is not None


def test_the_scan_finds_the_documented_paths():
    # A scan that found nothing would pass the test above vacuously.
    paths = documented_paths()
    assert len(paths) > 40
    assert "scrapy_robots.decoding.decode_robotstxt" in paths
    assert "scrapy_robots.usage" in paths


def test_a_path_that_does_not_exist_is_refused():
    with pytest.raises((ImportError, AttributeError)):
        resolve("scrapy_robots.sites.SiteBook")  # moved to policyfiles/book.py, never documented
    with pytest.raises(AttributeError):
        resolve("scrapy_robots.verdict.no_such_name")


def test_the_top_level_holds_the_entry_points_only():
    modules = {p.name for p in PACKAGE.glob("*.py")}
    assert modules == TOP_LEVEL, "move a new module into a stage's or a feature's folder (docs/flow.rst)"
    for folder in PACKAGE.iterdir():
        if folder.is_dir() and folder.name != "__pycache__":
            assert (folder / "__init__.py").is_file(), folder
            docstring = ast.get_docstring(ast.parse((folder / "__init__.py").read_text()))
            assert docstring, f"{folder.name}/__init__.py says what the folder holds"


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(ROOT).with_suffix("")
        name = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        found[name] = path
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports when it is imported (module level,
    ``if TYPE_CHECKING:`` blocks included: a circle there is still a circle to a reader)."""
    known = modules()
    graph: dict[str, set[str]] = {name: set() for name in known}

    def visit(name: str, body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If):
                visit(name, node.body)
                visit(name, node.orelse)
            elif isinstance(node, ast.Try):
                visit(name, node.body)
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("scrapy_robots"):
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    graph[name].add(full if full in known else node.module)
            elif isinstance(node, ast.Import):
                graph[name].update(a.name for a in node.names if a.name.startswith("scrapy_robots"))

    for name, path in known.items():
        visit(name, ast.parse(path.read_text(encoding="utf-8")).body)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in graph:
                continue
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            strong(v)
    return found


def test_no_import_circle():
    graph = import_graph()
    assert len(graph) > 80
    assert circles(graph) == []


def test_the_circle_finder_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def module_map() -> list[str]:
    """The rows of docs/flow.rst's module map, each as its text."""
    text = (ROOT / "docs" / "flow.rst").read_text(encoding="utf-8")
    section = text.split("The module map\n", 1)[1].split("\nOne request, followed", 1)[0]
    table = section.split(".. list-table::", 1)[1]
    return re.split(r"\n   \* - ", table)[1:]


def unmapped(rows: list[str]) -> list[str]:
    """The package's modules no row names: by path (``policyfiles/book.py``), or a folder's
    row (``tdmrep/``) naming the file (``file.py``); a folder's ``__init__.py`` by the folder."""
    firsts = [re.findall(r"``([^`]+)``", row.split("\n     - ", 1)[0]) for row in rows]
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == "__init__.py":
            continue
        folder = rel.rsplit("/", 1)[0] + "/" if "/" in rel else None
        named = False
        for first, row in zip(firsts, rows):
            if rel in first:
                named = True
            elif folder is not None and folder in first:
                named = path.name == "__init__.py" or f"``{path.name}``" in row or f"``{rel}``" in row
            if named:
                break
        if not named:
            missing.append(rel)
    return missing


def test_the_module_map_names_every_module():
    rows = module_map()
    assert len(rows) > 15
    assert unmapped(rows) == []


def test_the_map_check_sees_a_missing_module():
    rows = module_map()
    without_book = [row for row in rows if not row.startswith("``policyfiles/book.py``")]
    assert "policyfiles/book.py" in unmapped(without_book)


def test_the_map_check_sees_a_folders_module_it_does_not_name():
    rows = [row.replace("``entry.py``", "entry") if row.startswith("``cache/``") else row for row in module_map()]
    assert unmapped(rows) == ["cache/entry.py"]
