"""The defaults table (scrapy_robots/settings/defaults.py) against the code that reads the
settings and the page that documents them (docs/settings.rst, docs/fleet.rst)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from scrapy_robots.settings.defaults import DEFAULTS, Computed

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "scrapy_robots"
TABLE = PACKAGE / "settings" / "defaults.py"
NAME = re.compile(r"ROBOTSTXT_[A-Z0-9_]*[A-Z0-9]")
READERS = {"number", "read_bool", "choice", "domains"}


def _trees() -> dict[Path, ast.Module]:
    return {path: ast.parse(path.read_text(), str(path)) for path in sorted(PACKAGE.rglob("*.py"))}


def _names_in_code(skip: Path | None = None) -> dict[str, list[str]]:
    """Every string constant of the package that is a setting's name, where it is."""
    found: dict[str, list[str]] = {}
    for path, tree in _trees().items():
        if path == skip:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and NAME.fullmatch(node.value):
                found.setdefault(node.value, []).append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_every_setting_the_code_names_is_in_the_table():
    unknown = {name: where for name, where in _names_in_code().items() if name not in DEFAULTS}
    assert not unknown, f"not in settings/defaults.py: {unknown}"


def test_every_setting_in_the_table_is_read_somewhere():
    read = _names_in_code(skip=TABLE)
    assert not sorted(set(DEFAULTS) - set(read))


def _is_literal(node: ast.AST) -> bool:
    try:
        ast.literal_eval(node)
    except ValueError:
        return isinstance(node, ast.BinOp) and _is_literal(node.left) and _is_literal(node.right)
    return True


def test_no_reader_is_given_a_literal_default():
    # number(settings, NAME, kind, minimum) and read_bool/choice/domains take the table's
    # default; a computed one is passed as default=default(NAME, settings, ...).
    found = []
    for path, tree in _trees().items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            if func in READERS:
                given = [k.value for k in node.keywords if k.arg == "default"]
                if func == "read_bool":
                    given += node.args[2:]
                if any(_is_literal(value) for value in given):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
            elif func in ("getlist", "getbool", "getint", "getfloat", "get") and node.args:
                first = node.args[0]
                named = isinstance(first, ast.Constant) and isinstance(first.value, str) and NAME.fullmatch(first.value)
                if named and len(node.args) > 1 and _is_literal(node.args[1]):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, f"a literal default outside settings/defaults.py: {found}"


def test_unset_settings_read_as_the_table_says():
    from scrapy.settings import Settings

    from scrapy_robots.rfc9309 import Options
    from scrapy_robots.settings.config import RobotsConfig

    config = RobotsConfig.from_settings(Settings())
    assert config.maxsize == DEFAULTS["ROBOTSTXT_MAXSIZE"]
    assert config.backoff.pause == DEFAULTS["ROBOTSTXT_BACKOFF_PAUSE"]
    assert config.backoff.codes == frozenset(DEFAULTS["ROBOTSTXT_BACKOFF_HTTP_CODES"])
    assert config.directives.noindex == DEFAULTS["ROBOTSTXT_DIRECTIVES_NOINDEX"]
    assert config.fleet.outage == DEFAULTS["ROBOTSTXT_FLEET_OUTAGE"]
    assert config.timeout == 30.0 and config.fleet.lock_wait == 70.0  # min(180, 30); 2 x 30 + 10
    assert config.record is None and config.usage is None and config.obey is False
    # The rfc9309 library is used without Scrapy too: its own defaults are the table's.
    assert config.rfc9309 == Options()


# -- the settings page -------------------------------------------------------------------

ROW = re.compile(r"^   \* - (.+?)\n     - (.+?)\n     - ", re.MULTILINE | re.DOTALL)


def _documented(page: str) -> dict[str, str]:
    """Each setting of the page's tables -> its Default cell, as written. A row may name
    several settings; its cell then lists one default each, or one for all."""
    text = (ROOT / "docs" / page).read_text()
    rows: dict[str, str] = {}
    for names, cell in ROW.findall(text):
        settings = NAME.findall(names)
        if not settings or not all(f"``{name}``" in names for name in settings):
            continue
        cell = " ".join(cell.split())
        literals = re.findall(r"``(.+?)``", cell)
        each = literals if len(settings) > 1 and len(literals) == len(settings) else [cell] * len(settings)
        for name, value in zip(settings, each, strict=True):
            rows[name] = value if len(settings) == 1 or value == cell else f"``{value}``"
    return rows


def _stated(cell: str):
    """A cell's value: the literal it starts with (a gloss in brackets may follow)."""
    match = re.fullmatch(r"``([^`]+)``(?: \(.*\))?", cell)
    if match is None:
        raise ValueError(cell)
    value = ast.literal_eval(match.group(1))
    return tuple(value) if isinstance(value, list) else value


def test_every_setting_is_on_the_settings_page_and_every_one_there_is_in_the_table():
    page = _documented("settings.rst")
    assert not sorted(set(DEFAULTS) - set(page)), "in the table, not on docs/settings.rst"
    assert not sorted(set(page) - set(DEFAULTS)), "on docs/settings.rst, not in the table"


# settings.rst is the reference; the feature pages that repeat a default in a table too.
@pytest.mark.parametrize(
    "page", ["settings.rst", "fleet.rst", "compliance.rst", "directives.rst", "tdmrep.rst", "usage.rst"]
)
def test_the_docs_state_the_tables_defaults(page):
    wrong = {}
    for name, cell in _documented(page).items():
        default = DEFAULTS[name]
        if isinstance(default, Computed):
            if cell != default.docs:
                wrong[name] = (cell, default.docs)
            continue
        try:
            stated = _stated(cell)
        except ValueError:
            wrong[name] = (cell, default)
            continue
        if stated != default or type(stated) is bool is not type(default):
            wrong[name] = (cell, default)
    assert not wrong, f"docs/{page} (cell, table): {wrong}"
