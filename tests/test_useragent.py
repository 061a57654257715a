"""A full User-Agent header selects the same robots.txt group as its product token."""

from __future__ import annotations

import pytest

from scrapy_robots.useragent import product_token


@pytest.mark.parametrize(
    ("header", "token"),
    [
        ("FooBot", "FooBot"),
        ("foo-bot", "foo-bot"),
        ("Mozilla/5.0 (compatible; FooBot/2.1; +https://foo.example/bot)", "FooBot"),
        ("Scrapy/2.19.0 (+https://scrapy.org)", "Scrapy"),
        (
            "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; "
            "+http://www.google.com/bot.html) Chrome/120.0.0.0 Safari/537.36",
            "Googlebot",
        ),
        ("FooBot/1.0 (+https://foo.example)", "FooBot"),
        (b"FooBot/1.0", "FooBot"),
        ("", "*"),
        (None, "*"),
        # Real crawler names carry digits, first or inside (issue #30).
        ("Ai2Bot-Dolma", "Ai2Bot-Dolma"),
        ("Ai2Bot-Dolma/1.0 (+https://www.allenai.org/crawler)", "Ai2Bot-Dolma"),
        ("Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)", "MJ12bot"),
        ("img2dataset/1.45.0", "img2dataset"),
        ("360Spider", "360Spider"),
        ("Mozilla/5.0 (compatible; 360Spider/1.0; +http://www.so.com/help/help_3_2.html)", "360Spider"),
        ("360Spider/1.0 (+http://www.so.com/help/help_3_2.html)", "360Spider"),
        # A version is no product: it has no letter.
        (
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36",
            "Mozilla",
        ),
        ("2.0/3 FooBot/1.0", "FooBot"),
    ],
)
def test_product_token(header, token):
    assert product_token(header) == token


def test_a_non_ascii_letter_belongs_to_the_name():
    from scrapy_robots.parsers import GoogleParser, ProtegoParser, RFC9309Parser
    from scrapy_robots.useragent import product_token

    assert product_token("Bö") == "Bö"
    assert product_token("Mozilla/5.0 (compatible; Bötbot/1.0)") == "Bötbot"
    body = "User-agent: Bär\nDisallow: /\n".encode()
    # Cut at the "ö", the agent would be "B" and fall into the Bär group of every backend.
    for backend in (RFC9309Parser, ProtegoParser, GoogleParser):
        assert backend(body, user_agent="Bö").allowed("https://example.com/x"), backend
