"""A new user's path: a normal (non-editable) ``pip install`` of the package into a fresh
virtualenv, ``scrapy startproject``, the README's settings, then ``scrapy robots`` and
``scrapy crawl`` against a local site. Nothing of the checkout is on the path: a file
missing from the wheel, or an entry point that only works in an editable install, fails
here. Dependencies come from the package index (pip's cache after the first run)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from processes import copy_checkout

ROOT = Path(__file__).resolve().parent.parent
# One virtualenv for the module's tests, on one worker (tests/conftest.py, LANES).
pytestmark = pytest.mark.slow
ROBOTS = b"User-agent: *\nDisallow: /private\nCrawl-delay: 0.2\n"
SPIDER = """
import scrapy


class Visit(scrapy.Spider):
    name = "visit"

    def __init__(self, site="", **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [f"{site}/page", f"{site}/private/x"]

    def parse(self, response):
        yield {"url": response.url}
"""


def _send(handler: BaseHTTPRequestHandler, body: bytes, kind: str) -> None:
    """A 200 with ``body`` as ``kind``, its length given."""
    handler.send_response(200)
    handler.send_header("Content-Type", kind)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


class _Site(BaseHTTPRequestHandler):
    paths: list[str] = []

    def do_GET(self) -> None:
        self.paths.append(self.path)
        if self.path == "/robots.txt":
            _send(self, ROBOTS, "text/plain")
        else:
            _send(self, b"<html>page</html>", "text/html")

    def log_message(self, format: str, *args: object) -> None:
        pass


def _run(args: list[str], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    # The fresh virtualenv alone: no PYTHONPATH, no project of the checkout, no proxy.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCRAPY_", "PYTHON")) and "proxy" not in k.lower()}
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """A virtualenv with scrapy-robots installed from the checkout, not editable."""
    where = tmp_path_factory.mktemp("fresh")
    # From a copy of the sources: pip builds in the tree, and a stale build/ of the
    # checkout could hand the wheel a module that no longer exists.
    source = where / "source"
    copy_checkout(source)
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = _run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(source)],
        cwd=where,
        timeout=900,
    )
    assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]
    return venv


def test_the_installed_package_is_not_the_checkout(fresh):
    out = _run([str(fresh / "bin" / "python"), "-c", "import scrapy_robots; print(scrapy_robots.__file__)"], cwd=fresh)
    assert out.returncode == 0, out.stderr
    assert str(fresh) in out.stdout and str(ROOT) not in out.stdout, out.stdout


def test_startproject_the_readmes_settings_then_robots_and_crawl(fresh, tmp_path):
    scrapy = str(fresh / "bin" / "scrapy")
    made = _run([scrapy, "startproject", "shop"], cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    project = tmp_path / "shop"
    settings = project / "shop" / "settings.py"
    # The README's two lines; startproject's template already says ROBOTSTXT_OBEY = True.
    settings.write_text(
        settings.read_text()
        + '\nROBOTSTXT_OBEY = True\nADDONS = {"scrapy_robots.Addon": 0}\nTELNETCONSOLE_ENABLED = False\n'
    )
    (project / "shop" / "spiders" / "visit.py").write_text(SPIDER)

    _Site.paths = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    site = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        answer = _run([scrapy, "robots", "--brief", f"{site}/page", f"{site}/private/x"], cwd=project)
        assert answer.returncode == 1, answer.stdout + answer.stderr  # 1: a URL is denied
        assert answer.stdout.splitlines() == [
            f"allowed  {site}/page  (no rule matches)",
            f"denied   {site}/private/x  (line 2: Disallow: /private)",
        ], answer.stdout + answer.stderr
        # The command writes nothing into the project.
        assert sorted(p.name for p in project.iterdir()) == ["scrapy.cfg", "shop"]

        _Site.paths = []
        crawl = _run([scrapy, "crawl", "visit", "-a", f"site={site}"], cwd=project)
    finally:
        server.shutdown()
        server.server_close()
    log = crawl.stderr
    assert crawl.returncode == 0, log[-3000:]
    assert "] ERROR:" not in log and "Traceback" not in log, log[-3000:]
    assert "scrapy_robots.middleware.RobotsTxtMiddleware" in log, log[-3000:]  # ours, from the add-on
    assert _Site.paths.count("/robots.txt") == 1 and "/page" in _Site.paths, _Site.paths
    assert "/private/x" not in _Site.paths
    assert re.search(r"'robotstxt/forbidden': 1\b", log), log[-3000:]
    assert re.search(r"'item_scraped_count': 1\b", log), log[-3000:]


SITEMAP_SPIDER = """
from scrapy.spiders import SitemapSpider


class Sitemaps(SitemapSpider):
    name = "sitemaps"

    def __init__(self, site="", **kwargs):
        super().__init__(**kwargs)
        self.sitemap_urls = [f"{site}/robots.txt"]

    def parse(self, response):
        yield {"url": response.url}
"""


class _SitemapSite(BaseHTTPRequestHandler):
    """robots.txt names a sitemap of three pages, one of which robots.txt disallows."""

    paths: list[str] = []

    def do_GET(self) -> None:
        self.paths.append(self.path)
        here = f"http://{self.headers['Host']}"
        if self.path == "/robots.txt":
            body, kind = f"User-agent: *\nDisallow: /private\nSitemap: {here}/sitemap.xml\n".encode(), "text/plain"
        elif self.path == "/sitemap.xml":
            urls = "".join(f"<url><loc>{here}{path}</loc></url>" for path in ("/a", "/b", "/private/c"))
            body = f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'.encode()
            kind = "application/xml"
        else:
            body, kind = b"<html>page</html>", "text/html"
        _send(self, body, kind)

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_a_sitemap_spider_from_robots_txt_downloads_it_once_where_scrapys_middleware_does_twice(fresh, tmp_path):
    # Issue #22, as a user runs it: `scrapy crawl` of a SitemapSpider started from robots.txt.
    scrapy = str(fresh / "bin" / "scrapy")
    assert _run([scrapy, "startproject", "news"], cwd=tmp_path).returncode == 0
    project = tmp_path / "news"
    settings = project / "news" / "settings.py"
    base = settings.read_text() + "\nROBOTSTXT_OBEY = True\nTELNETCONSOLE_ENABLED = False\n"
    (project / "news" / "spiders" / "sitemaps.py").write_text(SITEMAP_SPIDER)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _SitemapSite)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    site = f"http://127.0.0.1:{server.server_address[1]}"
    runs = {}
    try:
        for name, extra in (("stock", ""), ("ours", 'ADDONS = {"scrapy_robots.Addon": 0}\n')):
            settings.write_text(base + extra)
            _SitemapSite.paths = []
            crawl = _run([scrapy, "crawl", "sitemaps", "-a", f"site={site}"], cwd=project)
            assert crawl.returncode == 0, crawl.stderr[-3000:]
            runs[name] = (sorted(_SitemapSite.paths), crawl.stderr)
    finally:
        server.shutdown()
        server.server_close()
    (stock_paths, _), (our_paths, log) = runs["stock"], runs["ours"]
    assert stock_paths.count("/robots.txt") == 2, stock_paths
    assert our_paths.count("/robots.txt") == 1, our_paths
    # The same sitemap and pages otherwise: /private/c denied by both.
    assert [p for p in our_paths if p != "/robots.txt"] == [p for p in stock_paths if p != "/robots.txt"]
    assert [p for p in our_paths if p != "/robots.txt"] == ["/a", "/b", "/sitemap.xml"]
    assert "] ERROR:" not in log and "Traceback" not in log, log[-3000:]
    assert re.search(r"Crawled \(200\) <GET http://127\.0\.0\.1:\d+/robots\.txt> .*\['robotstxt'\]", log), log[-3000:]
    assert re.search(r"'robotstxt/served': 1\b", log), log[-3000:]
    assert re.search(r"'item_scraped_count': 2\b", log), log[-3000:]
