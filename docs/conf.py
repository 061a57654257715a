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
html_theme = "alabaster"
# No network on the build machines: cross-references to Scrapy's docs stay plain text.
intersphinx_mapping: dict[str, tuple[str, str | None]] = {}
nitpicky = False
