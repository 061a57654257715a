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
exclude_patterns = ["_build"]
# The theme of Scrapy's own documentation: a reader moving between the two finds the same
# layout, and its content column is wide enough for the code blocks (alabaster's overflowed).
html_theme = "sphinx_rtd_theme"
html_theme_options = {"navigation_depth": 3}
# No network on the build machines: cross-references to Scrapy's docs stay plain text.
intersphinx_mapping: dict[str, tuple[str, str | None]] = {}
nitpicky = False
