"""The lint's finding codes, stable for scripts (``scrapy robots --lint --json``), and the
size beyond which parsers may stop reading."""

from __future__ import annotations

from typing import Final

#: RFC 9309 2.5: crawlers must parse at least 500 KiB; many stop right there.
SIZE_LIMIT: Final = 500 * 1024

UNKNOWN_DIRECTIVE: Final = "unknown-directive"
INVALID_LINE: Final = "invalid-line"
RULE_BEFORE_USER_AGENT: Final = "rule-before-user-agent"
RECORD_BEFORE_USER_AGENT: Final = "record-before-user-agent"
BAD_VALUE: Final = "bad-value"
DUPLICATE: Final = "duplicate"
OVERRIDDEN: Final = "overridden-disallow"
NO_LEADING_SLASH: Final = "no-leading-slash"
EMPTY_USER_AGENT: Final = "empty-user-agent"
RELATIVE_SITEMAP: Final = "relative-sitemap"
TOO_LARGE: Final = "too-large"
HTML: Final = "html"
BINARY: Final = "binary"
MISSPELT: Final = "misspelt-directive"
NOT_UTF8: Final = "not-utf8"
BAD_PREFERENCE: Final = "bad-preference"
UNKNOWN_PREFERENCE: Final = "unknown-preference"
LEGACY_LABEL: Final = "legacy-label"
FILE_WIDE_SIGNAL: Final = "file-wide-signal"
MISSING_COLON: Final = "missing-colon"
LEGACY_CHARSET: Final = "legacy-charset"
RELATIVE_LICENSE: Final = "relative-license"
SEVERAL_LICENSES: Final = "several-licenses"
