"""The preset dictionary of the packed entry (cache/entry.py, marker ``\x01``): text a
robots.txt record usually holds, so that even a small one compresses from its first byte.

Frozen: a stored entry names its dictionary by its marker byte, and every crawler version
that may read it must hold the same bytes (tests/test_cache_packed.py pins their SHA-256).
A better dictionary is a new constant with a new marker, never an edit of this one.

The lines are the commonest of the robots.txt corpus (seen in 5 files or more), least
common first (zlib reaches the end of its dictionary with the shortest distances), then
the shapes of a record and of the stored rules.
"""

from __future__ import annotations

_LINES = (
    "Disallow: /?q=filter/tips/",
    "Disallow: /wp-admin/",
    "Disallow: /UPGRADE.txt",
    "Disallow: /?q=user/register/",
    "Disallow: /?q=user/password/",
    "Disallow: /?q=user/login/",
    "Disallow: /INSTALL.mysql.txt",
    "Disallow: /INSTALL.pgsql.txt",
    "Disallow: /INSTALL.txt",
    "Disallow: /MAINTAINERS.txt",
    "Disallow: /?q=comment/reply/",
    "Disallow: /?q=search/",
    "Disallow: /?q=node/add/",
    "Disallow: /?q=admin/",
    "Disallow: /CHANGELOG.txt",
    "User-agent: Mediapartners-Google",
    "Disallow: /install.php",
    "Disallow: /update.php",
    "Disallow: /LICENSE.txt",
    "Disallow: /themes/",
    "Disallow: /search",
    "Disallow: /misc/",
    "Disallow: /cron.php",
    "# http://www.robotstxt.org/robotstxt.html",
    "Disallow: /xmlrpc.php",
    "Disallow: /filter/tips/",
    "Disallow: /modules/",
    "User-Agent: *",
    "Disallow: /scripts/",
    "# Ignored: http://example.com/site/robots.txt",
    "# Used:    http://example.com/robots.txt",
    '# and Google. By telling these "robots" where not to go on your site,',
    "# This file will be ignored unless it is at the root of your host:",
    "Disallow: /user/logout/",
    "# of your site by web crawlers and spiders run by sites like Yahoo!",
    "# you save bandwidth and server resources.",
    "# This file is to prevent the crawling and indexing of certain parts",
    "Crawl-delay: 10",
    "Disallow: /node/add/",
    "# For more information about the robots.txt standard, see:",
    "Disallow: /user/register/",
    "Disallow: /user/password/",
    "Disallow: /user/login/",
    "# Paths (no clean URLs)",
    "# robots.txt",
    "# Files",
    "# Paths (clean URLs)",
    "Disallow: /includes/",
    "Disallow: /comment/reply/",
    "# Directories",
    "Disallow: /profiles/",
    "Allow: /",
    "Disallow: /admin/",
    "#",
    "Disallow:",
    "Disallow: /search/",
    "Disallow: /",
    "User-agent: *",
)

_SHAPES = (
    '["https://www.example.com/.well-known/tdmrep.json","allow",1700000000.0,1700000000.0,404,'
    '"https://www.example.com/.well-known/tdmrep.json",0,0,false,null,0,null,null,"text/html; charset=utf-8",null]',
    '["https://www.example.com","parse",1700000000.0,1700000000.0,200,"https://www.example.com/robots.txt",0,0,'
    'false,null,0,null,null,"text/plain; charset=utf-8",null]',
    '{"rfc9309|longest,1,allow,lenient,1|":"[\\"agent-rules/1\\",\\"longest\\",true,\\"ignore\\",null,null,'
    '[[\\"/\\",false]]]"}',
)

DICTIONARY_1 = ("\n".join(_LINES) + "\n" + "\0".join(_SHAPES)).encode()
