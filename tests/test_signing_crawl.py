"""Web Bot Auth in a real crawl: sites on 127.0.0.x that let in only requests signed for
them (tests/servers.py, ``SignatureChecked``: http-message-signatures checks each), and
the crawl signs every request it sends, robots.txt's included: a redirect to another
host signed for that host, a retry signed again at its own time, a request that carries
an old signature signed anew. Unsigned, the same crawl is refused. A bad key is one line
at start-up. ``ROBOTSTXT_SIGNATURE_ONLY_WHEN_ASKED`` signs where a site asks, once."""

from __future__ import annotations

import logging
import time

import pytest
import pytest_twisted
from crawling import crawl, stat
from scrapy import Request
from servers import SignatureChecked, answer_later, body, page, redirect, sequence

from scrapy_robots.settings.errors import SettingError
from scrapy_robots.signing import RequestSigner, make_key

AGENT = "https://crawler.example/.well-known/http-message-signatures-directory"
ADDON = {"scrapy_robots.Addon": 0}
ROBOTS = "User-agent: *\nDisallow: /private\n"


@pytest.fixture
def key(tmp_path):
    return make_key(tmp_path / "crawler.pem")


def signed_site(serve, key, routes=None, **options):
    """A site whose robots.txt, pages and ``routes`` all check the signature; what each
    saw, in order, in ``site.checked``."""
    checked: list = []

    def wrap(handler):
        return SignatureChecked(handler, {key.keyid: key.private.public_key()}, checked=checked, **options)

    site = serve(wrap(body(ROBOTS)), {path: wrap(handler) for path, handler in (routes or {}).items()})
    site.pages = wrap(page)
    site.checked = checked
    return site


def signing(key, **more):
    return {"ADDONS": ADDON, "ROBOTSTXT_SIGNATURE_KEY": key.source, "ROBOTSTXT_SIGNATURE_AGENT": AGENT, **more}


def refused(site) -> list[str]:
    return [f"{c.path}: {c.why}" for c in site.checked if not c.ok]


def seen(site, path: str) -> list:
    return [c for c in site.checked if c.path == path]


@pytest_twisted.ensureDeferred
async def test_every_request_is_signed_robots_txt_too(serve, key):
    site = signed_site(serve, key)
    urls = [f"{site.url}/a", f"{site.url}/b", f"{site.url}/private"]
    crawler = await crawl(urls, **signing(key))
    assert refused(site) == []
    assert sorted(crawler.spider.downloaded) == [f"{site.url}/a", f"{site.url}/b"]
    assert list(crawler.spider.ignored) == [f"{site.url}/private"]  # robots.txt, signed, was read
    [robots] = seen(site, "/robots.txt")
    assert robots.ok and robots.agent == f'sig1="{AGENT}"'
    pages = seen(site, "/a") + seen(site, "/b")
    assert [c.ok for c in pages] == [True, True]
    assert len({c.nonce for c in pages + [robots]}) == 3  # one nonce per request
    assert stat(crawler, "robotstxt/signature/signed") == 3


@pytest_twisted.ensureDeferred
async def test_unsigned_the_same_crawl_is_refused(serve, key):
    site = signed_site(serve, key)
    crawler = await crawl([f"{site.url}/a"], ADDONS=ADDON)
    assert crawler.spider.downloaded == []
    assert [(c.path, c.ok) for c in site.checked] == [("/robots.txt", False)]
    assert "Signature-Input" in site.checked[0].why
    assert stat(crawler, "robotstxt/signature/signed", None) is None


@pytest_twisted.ensureDeferred
async def test_another_key_is_refused(serve, key, tmp_path):
    site = signed_site(serve, key)
    other = make_key(tmp_path / "other.pem")
    crawler = await crawl([f"{site.url}/a"], **signing(other))
    assert crawler.spider.downloaded == []
    assert [(c.path, c.why) for c in site.checked] == [("/robots.txt", "Unable to resolve verification key")]


@pytest_twisted.ensureDeferred
async def test_a_redirect_to_another_host_is_signed_for_that_host(serve, key):
    target = signed_site(serve, key)
    start = signed_site(serve, key, {"/go": redirect(f"{target.url}/landing", 302)})
    crawler = await crawl([f"{start.url}/go", f"{start.url}/go2"], **signing(key))
    assert refused(start) == refused(target) == []
    assert f"{target.url}/landing" in crawler.spider.downloaded
    [landing] = seen(target, "/landing")
    assert landing.ok and landing.authority == f"{target.host}:{target.port}"
    [go] = seen(start, "/go")
    assert go.ok and go.authority == f"{start.host}:{start.port}"
    assert go.nonce != landing.nonce
    assert [c.path for c in target.checked] == ["/robots.txt", "/landing"]  # the new host's robots.txt, signed


@pytest_twisted.ensureDeferred
async def test_a_retry_is_signed_again_at_its_own_time(serve, key):
    # The first answer, a 500, comes after 1.2 s: the retry's signature is made later.
    site = signed_site(serve, key, {"/flaky": sequence(answer_later(body("down", 500), 1.2), page)})
    crawler = await crawl([f"{site.url}/flaky"], **signing(key))
    assert crawler.spider.downloaded == [f"{site.url}/flaky"]
    first, retry = seen(site, "/flaky")
    assert first.ok and retry.ok
    assert retry.created > first.created
    assert retry.nonce != first.nonce


@pytest.mark.parametrize("signed", [False, True], ids=["unsigned", "signed"])
@pytest_twisted.ensureDeferred
async def test_an_old_signature_is_refused_and_replaced_when_signing(serve, key, signed):
    from crawling import RecordingSpider

    site = signed_site(serve, key)
    old = RequestSigner(key, AGENT).headers("GET", f"{site.url}/a", time.time() - 3600)

    class Replaying(RecordingSpider):
        async def start(self):
            yield Request(f"{site.url}/a", headers=old, callback=self.parse, errback=self.errback)

    settings = signing(key) if signed else {"ADDONS": ADDON}
    crawler = await crawl([], Replaying, ROBOTSTXT_OBEY=False, **settings)
    [page_seen] = site.checked
    if signed:
        assert page_seen.ok and page_seen.created >= int(time.time()) - 60
        assert crawler.spider.downloaded == [f"{site.url}/a"]
    else:
        assert not page_seen.ok and "expires" in page_seen.why
        assert crawler.spider.downloaded == []


@pytest_twisted.ensureDeferred
async def test_signed_without_robots_txt_obeyed(serve, key):
    site = signed_site(serve, key)
    crawler = await crawl([f"{site.url}/a", f"{site.url}/private"], ROBOTSTXT_OBEY=False, **signing(key))
    assert refused(site) == []
    assert len(crawler.spider.downloaded) == 2
    assert seen(site, "/robots.txt") == []


# -- ROBOTSTXT_SIGNATURE_ONLY_WHEN_ASKED


@pytest_twisted.ensureDeferred
async def test_only_when_asked_signs_the_site_that_asked(serve, key):
    asking = signed_site(serve, key, ask=True)
    plain = serve(body(ROBOTS))
    urls = [f"{asking.url}/a", f"{plain.url}/a", f"{plain.url}/b"]
    crawler = await crawl(urls, **signing(key, ROBOTSTXT_SIGNATURE_ONLY_WHEN_ASKED=True), ROBOTSTXT_OBEY=False)
    assert sorted(crawler.spider.downloaded) == sorted(urls)
    # The asking site: refused unsigned, then let in signed, once each.
    assert [(c.path, c.ok) for c in asking.checked] == [("/a", False), ("/a", True)]
    assert stat(crawler, "robotstxt/signature/asked") == 1
    assert stat(crawler, "robotstxt/signature/signed") == 1


@pytest_twisted.ensureDeferred
async def test_only_when_asked_a_refusal_of_a_signed_request_stands(serve, key, tmp_path):
    other = make_key(tmp_path / "other.pem")
    asking = signed_site(serve, key, ask=True)
    crawler = await crawl(
        [f"{asking.url}/a"], **signing(other, ROBOTSTXT_SIGNATURE_ONLY_WHEN_ASKED=True), ROBOTSTXT_OBEY=False
    )
    assert crawler.spider.downloaded == []
    # asked, signed once, refused: no loop
    assert [(c.path, c.ok) for c in asking.checked] == [("/a", False), ("/a", False)]
    assert stat(crawler, "robotstxt/signature/asked") == 1


# -- a bad key is one line at start-up


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda p: p / "missing.pem", "ROBOTSTXT_SIGNATURE_KEY: '{path}': no such file"),
        (
            lambda p: (p / "rsa.pem").write_text(RSA_PEM) and p / "rsa.pem",
            "ROBOTSTXT_SIGNATURE_KEY: '{path}' is an RSA",
        ),
    ],
    ids=["missing", "rsa"],
)
@pytest.mark.parametrize("arrangement", ["add-on", "by-hand"])
@pytest_twisted.ensureDeferred
async def test_a_bad_key_is_one_line_at_start_up(serve, caplog, tmp_path, make, said, arrangement):
    site = serve(body(ROBOTS))
    path = make(tmp_path)
    caplog.set_level(logging.INFO)
    extra = (
        {"ADDONS": ADDON}
        if arrangement == "add-on"
        else {"DOWNLOADER_MIDDLEWARES": {"scrapy_robots.signing.middleware.SigningMiddleware": 950}}
    )
    with pytest.raises(SettingError):
        await crawl([f"{site.url}/a"], ROBOTSTXT_SIGNATURE_KEY=str(path), ROBOTSTXT_SIGNATURE_AGENT=AGENT, **extra)
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1, errors
    assert errors[0].startswith("SigningMiddleware cannot start: " + said.format(path=path)), errors[0]
    assert "scrapy robots-key --make-key PATH" in errors[0]
    assert site.paths() == []


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ({"ROBOTSTXT_SIGNATURE_AGENT": None}, "ROBOTSTXT_SIGNATURE_KEY is set but ROBOTSTXT_SIGNATURE_AGENT is not"),
        ({"ROBOTSTXT_SIGNATURE_KEY": None}, "ROBOTSTXT_SIGNATURE_AGENT is set but ROBOTSTXT_SIGNATURE_KEY is not"),
        ({"ROBOTSTXT_SIGNATURE_AGENT": "http://crawler.example/d"}, "ROBOTSTXT_SIGNATURE_AGENT must be the https URL"),
        ({"ROBOTSTXT_SIGNATURE_EXPIRES": 90000}, "ROBOTSTXT_SIGNATURE_EXPIRES must be at most 86400"),
        ({"ROBOTSTXT_SIGNATURE_EXPIRES": 0}, "ROBOTSTXT_SIGNATURE_EXPIRES must be a finite whole number >= 1"),
        (
            {"ROBOTSTXT_SIGNATURE_COMPONENTS": ["@method"]},
            "ROBOTSTXT_SIGNATURE_COMPONENTS must cover '@authority' or '@target-uri'",
        ),
        ({"ROBOTSTXT_SIGNATURE_COMPONENTS": "@authority,@body"}, "ROBOTSTXT_SIGNATURE_COMPONENTS: ['@body']"),
    ],
)
def test_signing_settings_are_checked(key, settings, said):
    from scrapy.settings import Settings

    from scrapy_robots.settings.config import RobotsConfig

    given = {"ROBOTSTXT_SIGNATURE_KEY": key.source, "ROBOTSTXT_SIGNATURE_AGENT": AGENT, **settings}
    with pytest.raises(ValueError, match=r"^" + __import__("re").escape(said)):
        RobotsConfig.from_settings(Settings(given))


def test_signing_is_off_unless_both_are_set(key):
    from scrapy.settings import Settings

    from scrapy_robots.settings.config import RobotsConfig

    assert RobotsConfig.from_settings(Settings()).signing is None
    config = RobotsConfig.from_settings(Settings(signing(key, ROBOTSTXT_SIGNATURE_COMPONENTS="@target-uri, @method")))
    assert config.signing is not None
    assert config.signing.components == ("@target-uri", "@method")
    assert config.signing.key_path == key.source


def test_the_settings_know_every_component_the_signer_derives():
    # settings/ sits below signing/ and imports nothing of it: the two lists, compared.
    from scrapy_robots.settings.defaults import DEFAULTS, SIGNATURE_COMPONENTS
    from scrapy_robots.signing.base import DERIVED
    from scrapy_robots.signing.signer import DEFAULT_COMPONENTS

    assert set(SIGNATURE_COMPONENTS) == set(DERIVED)
    assert DEFAULTS["ROBOTSTXT_SIGNATURE_COMPONENTS"] == DEFAULT_COMPONENTS


#: A 1024-bit RSA key, made for this test (never a key to sign with).
RSA_PEM = """-----BEGIN PRIVATE KEY-----
MIICdgIBADANBgkqhkiG9w0BAQEFAASCAmAwggJcAgEAAoGBAMNVL95pNeXc9DAN
DEHmJaWD8b54v3tkrKWIPsFmRH4yjBTYg6+n0UtmkBojAXljgfAk6AyIeJvMJZ3i
gqznEZ5PRhwQiYx7vQpqwETtrQida5PDH3GN4MvxfgHfxRwD/f/xwVa0u9G5fN7W
gm7hAVVG2dHPDp9REQKayPjDlcF5AgMBAAECgYA2J9YfudfBpSLmd5egZaimXRCX
GG8uTNk5A68ye6IdwvHnjafk+YgjeYoWVQJBn38VD4Zugx+9QjpjrbtBKMdPOu9u
Z/LhTC0e4ryCLPemi7y3FExfDSL/OayWBfHqvSuenqsxMEnWAL7zJeqEhwW4Pr0X
TPiWt9FimEnwsb3BAQJBAOTiD0jE3OqHp690JayH//s0Hj+GS5E53QlNB57ThD4G
8v2RxCtthgwxTra6g8Iw68MoIQ7GiTjAwOHJpMfK0pECQQDaeY8rjsqTSa/xNgR2
2uAQxUTdL1HeE/M1dXu5vrirlcgx17bkyVFqx+pWwvPrIbBR8Mf4Grk936204DSR
uSRpAkB6wHKKCGqirZZVFumNmnLC+rSuRQwKGwpcjp9jovTtfzSaoa6fy+F0cI1S
mr1HTI1k4QS5s+isM1Q+w7JIJJLBAkEA2R45REZx15JBgev238+BIemKGG5wY81b
xGLvBJcfm5YNEEuafR/9A6uNnY+9LI2cVrJ9aHnWYkEqtjiixbdDEQJAIjCQ42l9
5CMqio6A/cg/H926HcfvSa7Dk6rBMXEWrb+GKn3w5R3mK4JFrj9WzlQy4Y7Gc4Bc
KvCprc83mjtP3A==
-----END PRIVATE KEY-----
"""


@pytest_twisted.ensureDeferred
async def test_without_a_nonce_each_request_verifies_and_carries_none(serve, key):
    # ROBOTSTXT_SIGNATURE_NONCE = False with the host alone covered: the requests of one
    # second share a signature (made once); each still verifies at the site.
    site = signed_site(serve, key)
    urls = [f"{site.url}/a", f"{site.url}/b", f"{site.url}/c"]
    settings = signing(key, ROBOTSTXT_SIGNATURE_NONCE=False, ROBOTSTXT_SIGNATURE_COMPONENTS=["@authority"])
    crawler = await crawl(urls, **settings)
    assert refused(site) == [] and sorted(crawler.spider.downloaded) == urls
    assert [c.nonce for c in site.checked] == [None] * 4  # robots.txt and the three pages
    assert stat(crawler, "robotstxt/signature/signed") == 4


def test_only_a_crawl_that_signs_where_asked_hears_the_answers(key):
    # Each answer passes every process_response in the chain: the signer has one only when
    # it must hear a site ask; a project's subclass keeps its own methods either way.
    from scrapy.utils.test import get_crawler

    from scrapy_robots.signing.middleware import AskedSigningMiddleware, SigningMiddleware

    class OwnSigner(SigningMiddleware):
        def own(self) -> str:
            return "mine"

    for asked in (False, True):
        crawler = get_crawler(settings_dict={**signing(key), "ROBOTSTXT_SIGNATURE_ONLY_WHEN_ASKED": asked})
        plain, own = SigningMiddleware.from_crawler(crawler), OwnSigner.from_crawler(crawler)
        assert hasattr(plain, "process_response") is asked and hasattr(own, "process_response") is asked
        assert isinstance(plain, AskedSigningMiddleware) is asked and isinstance(own, OwnSigner)
        assert own.own() == "mine"
