"""RFC 9651 structured fields: our subset (scrapy_robots/_sfv.py) against http-sfv, by the RFC's editor.

    .venv/bin/python bench/sfv.py                                   # speed, and ~50 handcrafted cases
    .venv/bin/python bench/sfv.py --tests ../structured-field-tests  # + httpwg's List and Dictionary tests

http-sfv is not a dependency of this package: ``pip install http-sfv`` into the venv to
compare (without it, only our figures and our answers to the cases are printed).

Speed: the µs to parse one header value, for ``Robots-Tag`` (a List) and ``Content-Usage``
(a Dictionary) values as sites send them, and malformed ones (which the RFC has us ignore
whole); median of 3 runs of many parses. Ours takes the ``str`` our callers hold (Scrapy's
header bytes decoded as latin-1, counted in); http-sfv takes the bytes.

Agreement: each case is parsed by both and compared as our subset keeps it (ours drops the
parameters of a Dictionary's members and of an inner list's items, which neither header
uses, and keeps a Byte Sequence as its base64 text: compared decoded here). With
``--tests DIR``, a checkout of https://github.com/httpwg/structured-field-tests, every
test of ``header_type`` ``list`` or ``dictionary`` of its JSON files (the ``raw`` lines
joined by ``", "``, as a recipient combines field lines) is run against both and
against its ``expected`` / ``must_fail``, projected the same way.
"""

from __future__ import annotations

import argparse
import base64
import json
import statistics
import subprocess
import sys
import time
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _common import print_table  # noqa: E402

from scrapy_robots.utils.sfv import Token, parse_sf_dictionary, parse_sf_list  # noqa: E402

try:
    import http_sfv
except ImportError:  # not a dependency: compared only where installed
    http_sfv = None

#: What the speed table parses: (label, kind, value).
HEADERS = [
    ("Robots-Tag, draft's example", "list", "*;nosnippet, ExampleBot;noindex"),
    ("Robots-Tag, one bot, 3 directives", "list", "foobot;noindex;nofollow;noarchive"),
    ("Robots-Tag, 4 bots", "list", "*;noai, googlebot;noindex;nosnippet, bingbot;noarchive, foobot;nofollow"),
    ("Robots-Tag, malformed (legacy syntax)", "list", "googlebot: noindex, nofollow"),
    ("Content-Usage, 2 members", "dictionary", "train-ai=n, search=y"),
    ("Content-Usage, 5 members", "dictionary", "train-ai=n, train-genai=n, search=y, ai-use=n, tdm=y"),
    ("Content-Usage, malformed (uppercase key)", "dictionary", "Train-AI=n, search=y"),
]

#: Handcrafted cases from RFC 9651's grammar: (kind, value, valid? None: may fail).
CASES: list[tuple[str, str, bool | None]] = [
    # parameters
    ("list", "*;nosnippet, ExampleBot;noindex", True),
    ("list", 'a;x=1;y=?0;z="s";w=tok;v=:AQID:;u=-1.5', True),
    ("list", "a;", False),
    ("list", "a;X=1", False),
    ("list", "a ;x", False),
    ("list", "a; x", True),
    ("list", "a;x =1", False),
    ("dictionary", "a=1;p=2, b", True),
    ("dictionary", "a;p, b=?0", True),
    # inner lists
    ("list", "(a b);p=1, c", True),
    ("list", "(a;q=1 b)", True),
    ("list", "(a  b )", True),
    ("list", "(a,b)", False),
    ("list", "(a b", False),
    ("list", "((a))", False),
    ("dictionary", "k=(1 2 3), j=()", True),
    # strings
    ("list", '"a \\"quoted\\" \\\\ s"', True),
    ("list", '"bad \\n escape"', False),
    ("list", '"unterminated', False),
    ("list", '"tab\tinside"', False),
    ("list", '""', True),
    # tokens
    ("list", "text/html, a:b/c, *star, x!#$%&'*+-.^_`|~", True),
    ("list", "1abc", False),
    ("list", "-tok", False),
    ("list", "tok@en", False),
    ("list", "ExampleBot", True),
    # numbers and their limits
    ("list", "123456789012345, -123456789012345", True),
    ("list", "1234567890123456", False),
    ("list", "123456789012.123", True),
    ("list", "1234567890123.1", False),
    ("list", "1.1234", False),
    ("list", "1.", False),
    ("list", "-", False),
    ("list", "0042, -0", True),
    # booleans and byte sequences
    ("list", "?1, ?0", True),
    ("list", "?2", False),
    ("list", ":aGVsbG8=:", True),
    ("list", ":aGVsbG8=", False),
    ("list", ":a b:", False),
    ("list", ":a=b:", False),
    ("list", ":aGVsbG8:", None),  # no "=" padding: SHOULD NOT fail, may (4.2.7)
    # dates and display strings (RFC 9651's two new types)
    ("list", "a;d=@1659578233", True),
    ("list", "@1.5", False),
    ("list", '%"f%c3%bc%c3%bc"', True),
    ("list", '%"f%C3%BC"', False),
    ("list", '%"a%c3"', False),
    # whitespace, separators, empty
    ("list", "", True),
    ("list", "   ", True),
    ("list", "  a  ,  b  ", True),
    ("list", "a\t,\tb", True),
    ("list", "a,", False),
    ("list", ",a", False),
    ("list", "a,,b", False),
    ("list", "a b", False),
    ("dictionary", "", True),
    ("dictionary", "a=1, a=2", True),
    ("dictionary", "a=1,", False),
    ("dictionary", "a = 1", False),
    ("dictionary", "A=1", False),
    ("dictionary", "1a=1", False),
    ("dictionary", "*a=1, a_b.c-d*=2", True),
    # non-ASCII
    ("list", '"caf\u00e9"', False),
    ("list", "t\u00f6ken", False),
    ("dictionary", "train-ai=n, s\u00e9arch=y", False),
]


# -- the two parsers, and one form to compare them in -----------------------------------


def ours(kind: str, value: str) -> Any:
    """Our answer in the compared form, or None when ours rejects ``value``."""
    parsed = (parse_sf_list if kind == "list" else parse_sf_dictionary)(value)
    if parsed is None:
        return None
    if kind == "list":
        return [(_ours_item(item), {k: _ours_item(v) for k, v in params.items()}) for item, params in parsed]
    return {key: _ours_item(member) for key, member in parsed.items()}


def _ours_item(value: Any) -> Any:
    if isinstance(value, list):
        return [_ours_item(v) for v in value]
    if isinstance(value, Token):
        return ("token", str(value))
    if isinstance(value, bytes):
        try:
            return ("binary", base64.b64decode(value + b"=" * (-len(value) % 4), validate=True))
        except ValueError:
            return ("binary", "undecodable base64")
    return value


def theirs(kind: str, value: str) -> Any:
    """http-sfv's answer in the compared form, or None when it rejects ``value``."""
    structure = http_sfv.List() if kind == "list" else http_sfv.Dictionary()
    try:
        structure.parse(value.encode("utf-8"))
    except ValueError:
        return None
    if kind == "list":
        return [(_their_member(m), {k: _their_item(v) for k, v in m.params.items()}) for m in structure]
    return {key: _their_member(member) for key, member in structure.items()}


def _their_member(member: Any) -> Any:
    if isinstance(member, http_sfv.InnerList):
        return [_their_item(item.value) for item in member]
    return _their_item(member.value)


def _their_item(value: Any) -> Any:
    if isinstance(value, http_sfv.Token):
        return ("token", str(value))
    if isinstance(value, bytes):
        return ("binary", value)
    if isinstance(value, Decimal):  # http-sfv's Decimals, ours are floats: equal to 3 places
        return float(value)
    if isinstance(value, datetime):  # http-sfv's Dates, in local time; ours are seconds
        return int(value.timestamp())
    return value


def expected(kind: str, test: dict[str, Any]) -> Any:
    """A structured-field-tests ``expected`` in the compared form; None for ``must_fail``."""
    if test.get("must_fail"):
        return None
    if kind == "list":
        return [
            (_test_member(value), {k: _test_item(v) for k, v in params.items()}) for value, params in test["expected"]
        ]
    return {key: _test_member(value) for key, (value, _params) in test["expected"].items()}


def _test_member(value: Any) -> Any:
    if isinstance(value, list):  # an inner list: [[item, params], ...]
        return [_test_item(item) for item, _params in value]
    return _test_item(value)


def _test_item(value: Any) -> Any:
    if isinstance(value, dict):
        if value["__type"] == "token":
            return ("token", value["value"])
        if value["__type"] == "binary":
            return ("binary", base64.b32decode(value["value"]))
        return (value["__type"], value["value"])
    return value


# -- speed -------------------------------------------------------------------------------


def per_parse(parse: Any, value: Any, calls: int) -> float:
    """Median over 3 runs of ``calls`` parses: µs per parse."""
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(calls):
            parse(value)
        runs.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(runs)


def speed(calls: int) -> None:
    rows = []
    for label, kind, value in HEADERS:
        raw = value.encode("latin-1")
        ours_parse = parse_sf_list if kind == "list" else parse_sf_dictionary
        ours_us = per_parse(lambda raw, parse=ours_parse: parse(raw.decode("latin-1")), raw, calls)
        row = [
            label,
            value if len(value) < 40 else value[:37] + "...",
            "yes" if ours(kind, value) is not None else "no",
        ]
        row.append(f"{ours_us:.2f}")
        if http_sfv is not None:
            structure = http_sfv.List if kind == "list" else http_sfv.Dictionary

            def parse(raw: bytes, structure: Any = structure) -> None:
                try:
                    structure().parse(raw)
                except ValueError:
                    pass

            their_us = per_parse(parse, raw, calls)
            row += [f"{their_us:.2f}", f"{their_us / ours_us:.1f}"]
        rows.append(row)
    print(f"µs per header value parsed, median of 3 runs of {calls:,} parses:\n")
    headers = ["header", "value", "valid", "ours µs"] + (["http-sfv µs", "http-sfv / ours"] if http_sfv else [])
    print_table(headers, rows)


def import_cost() -> None:
    """What importing http-sfv costs a crawl, in a fresh interpreter (median of 3)."""
    alone = "import time; s = time.perf_counter(); import http_sfv; print(time.perf_counter() - s)"
    # In a crawl, Scrapy (and typing-extensions with it) is imported already.
    after = "import scrapy.crawler, scrapy_robots.usage; " + alone
    times = [float(subprocess.check_output([sys.executable, "-c", alone], text=True)) for _ in range(3)]
    marginal = [float(subprocess.check_output([sys.executable, "-c", after], text=True)) for _ in range(3)]
    files = [p for p in Path(http_sfv.__file__).parent.glob("*.py")]
    lines = sum(len(p.read_text().splitlines()) for p in files)
    ours_lines = len((ROOT / "scrapy_robots" / "utils" / "sfv.py").read_text().splitlines())
    print(
        f"http-sfv {http_sfv.__version__}: {len(files)} modules, {lines} lines (ours: utils/sfv.py, "
        f"{ours_lines} lines, robots.txt line helpers included); "
        f"import {statistics.median(times) * 1e3:.1f} ms in a fresh interpreter, "
        f"{statistics.median(marginal) * 1e3:.1f} ms after Scrapy's (medians of 3); "
        "requires typing-extensions.\n"
    )


# -- agreement -------------------------------------------------------------------------------


def handcrafted() -> None:
    rows, ours_right, both_agree = [], 0, 0
    for kind, value, valid in CASES:
        mine = ours(kind, value)
        right = valid is None or (mine is not None) == valid
        ours_right += right
        row = [kind, repr(value), "may fail" if valid is None else "valid" if valid else "invalid"]
        row.append("ok" if right else "WRONG")
        if http_sfv is not None:
            other = theirs(kind, value)
            their_right = valid is None or (other is not None) == valid
            agree = mine == other
            both_agree += agree
            row += ["ok" if their_right else "WRONG", "same" if agree else f"DIFFER: ours {mine!r}, http-sfv {other!r}"]
        if not right or (http_sfv is not None and not row[-1] == "same") or (http_sfv and row[4] != "ok"):
            rows.append(row)
    total = len(CASES)
    summary = (
        f"Handcrafted cases (RFC 9651's grammar): {total}; ours accepts/rejects as the RFC says: {ours_right}/{total}"
    )
    if http_sfv is not None:
        summary += f"; ours and http-sfv give the same answer (value and parameters, as compared): {both_agree}/{total}"
    print(summary + ".")
    if rows:
        headers = ["kind", "value", "RFC", "ours"] + (["http-sfv", "answers"] if http_sfv else [])
        print("The cases where one of them is not right, or they differ:\n")
        print_table(headers, rows)
    else:
        print()


def httpwg(directory: Path) -> None:
    rows, counts = [], {"tests": 0, "ours": 0, "theirs": 0}
    for path in sorted(directory.glob("*.json")):
        try:
            tests = json.loads(path.read_text())
        except (ValueError, UnicodeDecodeError):
            continue
        if not isinstance(tests, list):
            continue
        for test in tests:
            kind = test.get("header_type") if isinstance(test, dict) else None
            if kind not in ("list", "dictionary") or "raw" not in test:
                continue
            value = ", ".join(test["raw"])
            want = expected(kind, test)
            mine = ours(kind, value)
            counts["tests"] += 1
            ours_ok = mine == want or bool(test.get("can_fail") and mine is None)
            counts["ours"] += ours_ok
            their_ok = None
            if http_sfv is not None:
                other = theirs(kind, value)
                their_ok = other == want or bool(test.get("can_fail") and other is None)
                counts["theirs"] += their_ok
            if not ours_ok or their_ok is False:
                rows.append([f"{path.name}: {test['name']}", repr(value), "ok" if ours_ok else f"FAIL ({mine!r})",
                             "-" if their_ok is None else "ok" if their_ok else "FAIL"])  # fmt: skip
    line = f"httpwg/structured-field-tests in {directory}: {counts['tests']} List and Dictionary tests; "
    line += f"ours passes {counts['ours']}"
    if http_sfv is not None:
        line += f", http-sfv {counts['theirs']}"
    print(line + " (compared as our subset keeps them).")
    if rows:
        print()
        print_table(["test", "value", "ours", "http-sfv"], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20_000, help="parses per run (default 20,000)")
    parser.add_argument("--tests", type=Path, help="a checkout of httpwg/structured-field-tests")
    args = parser.parse_args()
    if http_sfv is None:
        print("http-sfv is not installed (pip install http-sfv): our figures only.\n")
    speed(args.calls)
    if http_sfv is not None:
        import_cost()
    handcrafted()
    if args.tests:
        httpwg(args.tests)


if __name__ == "__main__":
    main()
