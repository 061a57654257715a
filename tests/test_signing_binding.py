"""The key directory's own signature (the draft's domain binding, issue #51): the draft's
signed directory response reproduced byte for byte (Content-Digest, Signature-Input,
Signature), Cloudflare's variant of it too, and what ``scrapy robots-key --authority``
prints checked by http-message-signatures (an RFC 9421 verifier the package did not
write) as a verifier fetching the directory would: at that host it holds; at another host,
another port, or with one byte of the body changed, it does not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from http_message_signatures import HTTPMessageVerifier, HTTPSignatureKeyResolver, algorithms
from http_message_signatures.exceptions import InvalidSignature
from http_message_signatures.structures import CaseInsensitiveDict

from scrapy_robots.signing import load_key, make_key
from scrapy_robots.signing.binding import DIRECTORY_TAG, content_digest, directory_headers, host_authority
from scrapy_robots.signing.keys import DIRECTORY_MEDIA_TYPE, DIRECTORY_PATH, SigningKey

B14 = {"kty": "OKP", "crv": "Ed25519", "d": "n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU"}
B14_THUMBPRINT = "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U"
#: draft-ietf-webbotauth-httpsig-protocol, the signed directory response of its test vectors:
#: the body "signed exactly as shown, with no trailing newline", served at signature-agent.test.
VECTOR_BODY = (
    b'{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U",'
    b'"x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs","use":"sig"}]}'
)
VECTOR_AUTHORITY = "signature-agent.test"
VECTOR_DIGEST = "sha-256=:CADMT2aBdV/rqQr/NIru64ERQkCobVvllA4V0fLFDu0=:"
DRAFT_INPUT = (
    'binding=("@authority";req "content-digest");created=1735689600;expires=4889289600;'
    'keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";tag="http-message-signatures-directory"'
)
DRAFT_SIGNATURE = "binding=:l6P8R67tm3kujAxbHWio7ll01qrEZ0dKD/WWlGhNYEmTnFZM8Wt0VQ9zqGfvo7T/UMkBxsigzChM1Gpz7gOVBg==:"
#: cloudflare/web-bot-auth packages/web-bot-auth/test/test_data/web_bot_auth_directory_response_v1.json
#: (commit 3b38d6c): the same body and key, label binding0, alg written, Cloudflare's order.
CLOUDFLARE_INPUT = (
    'binding0=("@authority";req "content-digest");created=1735689600;'
    'keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=4889289600;'
    'tag="http-message-signatures-directory"'
)
CLOUDFLARE_SIGNATURE = (
    "binding0=:yiHq0TXrbpzbmlttAQMpYoAufitFJUWuNsakB7QQMoN0EHbo5o51bZRVR8az/ptTWCwllix9clrKXfGKwdPzBg==:"
)


@pytest.fixture
def b14(tmp_path) -> SigningKey:
    (tmp_path / "b14.json").write_text(json.dumps(B14))
    key = load_key(tmp_path / "b14.json")
    assert key.keyid == B14_THUMBPRINT
    return key


def verified(key: SigningKey, headers: dict[str, str], body: bytes, fetched_from: str) -> list:
    """http-message-signatures' verdict on a directory response fetched from ``fetched_from``
    (scheme://host[:port]): the signature, its coverage and the body's digest."""

    class Resolver(HTTPSignatureKeyResolver):
        def resolve_public_key(self, key_id: str):
            return {key.keyid: key.private.public_key()}.get(key_id)

    request = SimpleNamespace(method="GET", url=fetched_from + DIRECTORY_PATH, headers=CaseInsensitiveDict())
    response = SimpleNamespace(status_code=200, headers=CaseInsensitiveDict(headers), request=request)
    verifier = HTTPMessageVerifier(signature_algorithm=algorithms.ED25519, key_resolver=Resolver())
    return verifier.verify(
        response,
        max_age=None,
        expect_tag=DIRECTORY_TAG,
        require_components=('"@authority";req', "content-digest"),
        body=body,
    )


def test_the_drafts_signed_directory_response_byte_for_byte(b14):
    headers = directory_headers(b14, VECTOR_BODY, VECTOR_AUTHORITY, 1735689600, 4889289600)
    assert headers == {
        "Content-Type": DIRECTORY_MEDIA_TYPE,
        "Content-Digest": VECTOR_DIGEST,
        "Signature-Input": DRAFT_INPUT,
        "Signature": DRAFT_SIGNATURE,
    }
    assert verified(b14, headers, VECTOR_BODY, f"https://{VECTOR_AUTHORITY}")


def test_cloudflares_signed_directory_response_byte_for_byte(b14):
    headers = directory_headers(b14, VECTOR_BODY, VECTOR_AUTHORITY, 1735689600, 4889289600, label="binding0", alg=True)
    assert (headers["Content-Digest"], headers["Signature-Input"], headers["Signature"]) == (
        VECTOR_DIGEST,
        CLOUDFLARE_INPUT,
        CLOUDFLARE_SIGNATURE,
    )
    assert verified(b14, headers, VECTOR_BODY, f"https://{VECTOR_AUTHORITY}")


def test_the_binding_holds_only_for_its_host_and_its_body(b14):
    headers = directory_headers(b14, VECTOR_BODY, VECTOR_AUTHORITY, 1735689600, 4889289600)
    # The same response, served again from another host, or the same host's other port.
    for elsewhere in ("https://copy.example", "https://signature-agent.test:8443", "https://signature-agent.tesu"):
        with pytest.raises(InvalidSignature):
            verified(b14, headers, VECTOR_BODY, elsewhere)
    # One byte of the body changed, then the byte next to it: the digest no longer holds.
    for offset in (len(VECTOR_BODY) // 2, len(VECTOR_BODY) // 2 + 1):
        body = bytearray(VECTOR_BODY)
        body[offset] ^= 0x01
        with pytest.raises(InvalidSignature):
            verified(b14, headers, bytes(body), f"https://{VECTOR_AUTHORITY}")
    # A digest of the changed body put in the header: the signature no longer holds.
    changed = VECTOR_BODY.replace(b'"use":"sig"', b'"use":"enc"')
    with pytest.raises(InvalidSignature):
        verified(b14, {**headers, "Content-Digest": content_digest(changed)}, changed, f"https://{VECTOR_AUTHORITY}")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("crawler.example", "crawler.example"),
        ("Crawler.EXAMPLE:443", "crawler.example"),
        ("crawler.example:8443", "crawler.example:8443"),
        ("[2001:db8::1]", "[2001:db8::1]"),
    ],
)
def test_the_authority_is_written_as_at_authority_is(given, expected):
    assert host_authority(given) == expected


@pytest.mark.parametrize(
    "given", ["https://crawler.example", "crawler.example/path", "crawler.example:http", "", "a@b"]
)
def test_an_authority_that_is_not_a_host_is_refused(given):
    with pytest.raises(ValueError, match="host"):
        host_authority(given)


def robots_key(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("SCRAPY_")}
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "robots-key", *args],
        cwd=tmp_path,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
    )


def printed(stdout: str) -> tuple[dict[str, str], bytes]:
    head, _, body = stdout.partition("\n\n")
    return dict(line.split(": ", 1) for line in head.splitlines()), body.encode()


def test_the_command_prints_the_headers_and_the_body_they_sign(tmp_path):
    key = make_key(tmp_path / "crawler.pem")
    shown = robots_key(tmp_path, "--key", "crawler.pem", "--authority", "Crawler.Example:443")
    assert shown.returncode == 0, shown.stderr
    headers, body = printed(shown.stdout)
    assert list(headers) == ["Content-Type", "Content-Digest", "Signature-Input", "Signature"]
    assert json.loads(body) == {"keys": [{**key.jwk, "kid": key.keyid}]}
    [result] = verified(key, headers, body, "https://crawler.example")
    assert result.parameters["keyid"] == key.keyid
    assert result.parameters["expires"] - result.parameters["created"] == 7 * 86400
    with pytest.raises(InvalidSignature):
        verified(key, headers, body, "https://other.example")
    # --body FILE: the body written there, byte for byte what the headers sign; --expires.
    written = robots_key(
        tmp_path, "-s", "ROBOTSTXT_SIGNATURE_KEY=crawler.pem", "--authority", "crawler.example:8443", "--body",
        "directory.json", "--expires", "3600",
    )  # fmt: skip
    assert written.returncode == 0, written.stderr
    headers = dict(line.split(": ", 1) for line in written.stdout.splitlines())
    body = (tmp_path / "directory.json").read_bytes()
    [result] = verified(key, headers, body, "https://crawler.example:8443")
    assert result.parameters["expires"] - result.parameters["created"] == 3600
    with pytest.raises(InvalidSignature):
        verified(key, headers, body, "https://crawler.example")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--authority", "https://crawler.example/"], "--authority: 'https://crawler.example/' is not a host"),
        (["--body", "d.json"], "--body writes the directory signed for --authority HOST"),
        (["--authority", "crawler.example", "--check", "d.json"], "--authority signs the directory"),
        (["--authority", "crawler.example", "--expires", "0"], "--expires must be a number of seconds above 0"),
    ],
)
def test_the_commands_mistakes_are_one_line(tmp_path, args, said):
    make_key(tmp_path / "crawler.pem")
    result = robots_key(tmp_path, "--key", "crawler.pem", *args)
    assert result.returncode == 2
    assert said in result.stderr
    assert not (tmp_path / "d.json").exists()
