from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

project = "scrapy-robots"
author = "scrapy-robots developers"
copyright = "2026, scrapy-robots developers"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.intersphinx"]
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_type_aliases = {"Heard": "scrapy_robots.policyfiles.stated.Heard"}
# GoogleParser's module imports Google's library (the `google` extra, a C++ wheel) at import;
# the docs extra does not install it, so the API page imports a stand-in.
autodoc_mock_imports = ["jwm"]
exclude_patterns = ["_build"]
# The theme of Scrapy's own documentation: a reader moving between the two finds the same
# layout, and its content column is wide enough for the code blocks (alabaster's overflowed).
html_theme = "sphinx_rtd_theme"
html_theme_options = {"navigation_depth": 3}
# No network on the build machines: cross-references to Scrapy's docs stay plain text.
intersphinx_mapping: dict[str, tuple[str, str | None]] = {}
# Every cross-reference is checked (`make docs`: sphinx -n -W). No network on the build
# machines, so no intersphinx: the references to Scrapy's classes and the standard
# library's (in the type hints autodoc shows, and a few in the text) cannot resolve and
# are listed here on purpose. Anything of this package's own must resolve: document it
# (docs/api.rst) or fix the reference.
nitpicky = True
nitpick_ignore = [
    # Scrapy's own classes.
    ("py:class", "Crawler"),
    ("py:class", "BaseSettings"),
    ("py:class", "Request"),
    ("py:class", "Response"),
    ("py:class", "Spider"),
    ("py:class", "scrapy.robotstxt.RobotParser"),
    # The standard library's.
    ("py:mod", "urllib.robotparser"),
    ("py:class", "Path"),
    ("py:class", "os.PathLike"),
    ("py:class", "datetime.time"),
    ("py:class", "collections.abc.Callable"),
    ("py:class", "collections.abc.Awaitable"),
    ("py:class", "AbstractContextManager"),
]
