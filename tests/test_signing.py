"""Web Bot Auth signatures (scrapy_robots.signing): the drafts' and Cloudflare's vectors
reproduced byte for byte, the JWK thumbprints of RFC 7638 / RFC 8037, every signature
checked by an RFC 9421 verifier the package did not write (http-message-signatures),
and each kind of bad key file refused with what is wrong."""

from __future__ import annotations

import base64
import datetime
import json
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from http_message_signatures import HTTPMessageVerifier, HTTPSignatureKeyResolver, algorithms
from http_message_signatures.exceptions import InvalidSignature
from http_message_signatures.structures import CaseInsensitiveDict

from scrapy_robots.signing import KeyFileError, RequestSigner, directory, load_key, make_key, thumbprint
from scrapy_robots.signing.base import authority
from scrapy_robots.signing.keys import SigningKey

VECTORS = Path(__file__).parent / "web_bot_auth"
V2 = json.loads((VECTORS / "web_bot_auth_architecture_v2.json").read_text())
ED25519_V2 = [v for v in V2 if v["key"]["kty"] == "OKP"]
#: RFC 9421 B.1.4's Ed25519 key, as draft -01's vectors use it.
B14_X = "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"
B14_THUMBPRINT = "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U"
#: draft-ietf-webbotauth-httpsig-protocol-01, Test Vectors, Ed25519 dictionary form.
DRAFT_BASE = (
    '"@authority": example.com\n'
    '"signature-agent";key="agent2": "https://signature-agent.test"\n'
    '"@signature-params": ("@authority" "signature-agent";key="agent2");created=1735689600;'
    'keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=4889289600;'
    'nonce="n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA==";'
    'tag="web-bot-auth"'
)
DRAFT_SIGNATURE = "sig2=:RdNFx5Bj6au3YgAMQL/RzmUlZE8QZLIaXGRpw985hWnwPfMxT228NMk6ehRS1PSl4e8PhbNZACSanGdhEwYCCg==:"


def key_file(tmp_path: Path, jwk: dict, name: str = "key.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(jwk))
    return path


def vector_signer(tmp_path: Path, vector: dict) -> RequestSigner:
    key = load_key(key_file(tmp_path, vector["key"]))
    components = ("@authority",)
    if "signature_agent_key" in vector:
        return RequestSigner(
            key, "https://signature-agent.test", components, label=vector["label"], member=vector["signature_agent_key"]
        )
    return RequestSigner(key, None, components, label=vector["label"])


class Resolver(HTTPSignatureKeyResolver):
    """The verifier's key lookup: keyid -> public key, as a site's directory would give."""

    def __init__(self, *keys: SigningKey):
        self.keys = {key.keyid: key.private.public_key() for key in keys}

    def resolve_public_key(self, key_id: str):
        return self.keys.get(key_id)


def verify(key: SigningKey, method: str, url: str, headers: dict[str, str], max_age: float | None = 300) -> list:
    """http-message-signatures' verdict on a signed request, as a site would reach it."""
    message = SimpleNamespace(method=method, url=url, headers=CaseInsensitiveDict(headers))
    verifier = HTTPMessageVerifier(signature_algorithm=algorithms.ED25519, key_resolver=Resolver(key))
    age = None if max_age is None else datetime.timedelta(seconds=max_age)
    return verifier.verify(message, max_age=age, expect_tag="web-bot-auth")


# -- the vectors


def test_the_draft_vector_byte_for_byte(tmp_path):
    [vector] = [v for v in ED25519_V2 if v["label"] == "sig2"]
    signer = vector_signer(tmp_path, vector)
    params = signer.params(1735689600, 4889289600, vector["nonce"])
    assert signer.base("GET", "https://example.com/path/to/resource", params) == DRAFT_BASE
    headers = signer.sign("GET", vector["target_url"], 1735689600, 4889289600, vector["nonce"])
    assert headers["Signature"] == DRAFT_SIGNATURE
    assert headers["Signature-Input"] == vector["signature_input"]
    assert headers["Signature-Agent"] == vector["signature_agent"] == 'agent2="https://signature-agent.test"'


@pytest.mark.parametrize("vector", ED25519_V2, ids=lambda v: v["label"])
def test_cloudflare_v2_vectors(tmp_path, vector):
    signer = vector_signer(tmp_path, vector)
    created, expires = vector["created_ms"] // 1000, vector["expires_ms"] // 1000
    headers = signer.sign("GET", vector["target_url"], created, expires, vector["nonce"])
    assert headers["Signature"] == vector["signature"]
    assert headers["Signature-Input"] == vector["signature_input"]
    assert headers.get("Signature-Agent") == vector.get("signature_agent")
    # The published signature verifies with the other implementation too (no age limit:
    # created is in 2025, expires in 2124).
    assert verify(signer.key, "GET", vector["target_url"], headers, max_age=None)


def test_a_changed_vector_fails(tmp_path):
    # The two tests above can fail: one byte of the nonce, or another host, another signature.
    [vector] = [v for v in ED25519_V2 if v["label"] == "sig2"]
    signer = vector_signer(tmp_path, vector)
    other_nonce = signer.sign("GET", vector["target_url"], 1735689600, 4889289600, "x" + vector["nonce"][1:])
    other_host = signer.sign("GET", "https://example.org/path/to/resource", 1735689600, 4889289600, vector["nonce"])
    assert other_nonce["Signature"] != DRAFT_SIGNATURE
    assert other_host["Signature"] != DRAFT_SIGNATURE


@pytest.mark.parametrize(
    "vector", json.loads((VECTORS / "thumbprint_vectors.json").read_text()), ids=lambda v: v["name"]
)
def test_thumbprint_vectors(vector):
    assert thumbprint(json.loads(vector["jwk"])) == vector["thumbprint"]


def test_thumbprints_of_rfc8037_and_rfc9421_keys():
    # RFC 8037 appendix A.3, and RFC 9421 B.1.4's key (the draft's keyid).
    assert thumbprint({"crv": "Ed25519", "kty": "OKP", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}) == (
        "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
    )
    assert thumbprint({"kty": "OKP", "crv": "Ed25519", "x": B14_X, "kid": "ignored", "d": "ignored"}) == B14_THUMBPRINT


# -- signatures the other implementation checks


@pytest.fixture
def key(tmp_path) -> SigningKey:
    return make_key(tmp_path / "crawler.pem")


@pytest.mark.parametrize(
    "url",
    [
        "https://Example.COM/a/b?q=1",
        "http://example.com:80/",
        "https://example.com:8443/x;p?y=%20",
        "http://127.0.0.1:8080",
        "http://[::1]:8080/v6",
    ],
)
def test_every_signature_verifies(key, url):
    signer = RequestSigner(key, "https://crawler.example/.well-known/http-message-signatures-directory")
    for method in ("GET", "HEAD"):
        headers = signer.headers(method, url, time.time())
        [result] = verify(key, method, url, headers)
        assert result.parameters["keyid"] == key.keyid
        assert result.parameters["tag"] == "web-bot-auth"


def test_target_uri_and_query_verify(key):
    signer = RequestSigner(key, "https://c.example/d", ("@target-uri", "@query", "@method"))
    url = "https://example.com/p?a=1&b=2"
    assert verify(key, "GET", url, signer.headers("GET", url, time.time()))


def test_the_verifier_refuses_what_is_wrong(key, tmp_path):
    signer = RequestSigner(key, "https://crawler.example/dir")
    url = "https://example.com/page"
    now = time.time()
    headers = signer.headers("GET", url, now)
    with pytest.raises(InvalidSignature):  # another host
        verify(key, "GET", "https://example.org/page", headers)
    with pytest.raises(InvalidSignature):  # another method
        verify(key, "POST", url, headers)
    with pytest.raises(InvalidSignature):  # another agent
        verify(key, "GET", url, {**headers, "Signature-Agent": 'sig1="https://evil.example/dir"'})
    with pytest.raises(InvalidSignature):  # another key
        verify(make_key(tmp_path / "other.pem"), "GET", url, headers)
    with pytest.raises(InvalidSignature):  # expired
        verify(key, "GET", url, signer.headers("GET", url, now - 3600))


def test_two_requests_two_nonces(key):
    signer = RequestSigner(key, "https://c.example/d")
    first = signer.headers("GET", "https://example.com/", time.time())
    second = signer.headers("GET", "https://example.com/", time.time())
    assert first["Signature"] != second["Signature"]
    assert first["Signature-Input"] != second["Signature-Input"]


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://EXAMPLE.com:80/", "example.com"),
        ("https://example.com:443/", "example.com"),
        ("https://example.com:80/", "example.com:80"),
        ("http://example.com:8080/", "example.com:8080"),
        ("http://[::1]:8080/", "[::1]:8080"),
        ("http://user:pw@example.com/", "example.com"),
    ],
)
def test_authority(url, expected):
    from urllib.parse import urlsplit

    assert authority(urlsplit(url)) == expected


# -- key files


def test_pem_and_jwk_files_give_the_same_key(tmp_path, key):
    jwk = {**key.jwk, "d": _d(key)}
    assert load_key(key_file(tmp_path, jwk)).keyid == key.keyid == load_key(key.source).keyid
    assert load_key(key_file(tmp_path, {"keys": [jwk]}, "set.json")).keyid == key.keyid
    openssh = key.private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
    )
    (tmp_path / "id_ed25519").write_bytes(openssh)
    assert load_key(tmp_path / "id_ed25519").keyid == key.keyid


def test_the_b14_key_file_is_the_drafts_key(tmp_path):
    jwk = {"kty": "OKP", "crv": "Ed25519", "d": "n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU", "x": B14_X}
    key = load_key(key_file(tmp_path, jwk))
    assert key.keyid == B14_THUMBPRINT
    assert directory(key) == {"keys": [{"kty": "OKP", "crv": "Ed25519", "x": B14_X, "kid": B14_THUMBPRINT}]}


def _d(key: SigningKey) -> str:
    from scrapy_robots.signing.keys import b64url

    return b64url(
        key.private.private_bytes(
            serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
        )
    )


def _pem(private) -> bytes:
    return private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


@pytest.mark.parametrize(
    ("write", "said"),
    [
        (None, "no such file"),
        (lambda p: p.write_bytes(b"hello"), "neither a PEM key nor a JWK"),
        (lambda p: p.write_bytes(_pem(rsa.generate_private_key(65537, 2048))), "is an RSA key, not Ed25519"),
        (lambda p: p.write_bytes(_pem(ec.generate_private_key(ec.SECP256R1()))), "key, not Ed25519"),
        (
            lambda p: p.write_bytes(
                ed25519.Ed25519PrivateKey.generate().private_bytes(
                    serialization.Encoding.PEM,
                    serialization.PrivateFormat.PKCS8,
                    serialization.BestAvailableEncryption(b"secret"),
                )
            ),
            "is encrypted",
        ),
        (
            lambda p: p.write_bytes(
                ed25519.Ed25519PrivateKey.generate()
                .public_key()
                .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
            ),
            "holds a public key",
        ),
        (lambda p: p.write_text(json.dumps({"kty": "OKP", "crv": "Ed25519", "x": B14_X})), "holds a public JWK"),
        (lambda p: p.write_text(json.dumps({"kty": "EC", "crv": "P-256", "d": "AA"})), "not Ed25519"),
        (lambda p: p.write_text("{not json"), "not valid JSON"),
        (lambda p: p.mkdir(), "cannot be read"),
    ],
    ids=["missing", "garbage", "rsa", "ec", "encrypted", "public-pem", "public-jwk", "ec-jwk", "bad-json", "folder"],
)
def test_bad_key_files_say_what_is_wrong(tmp_path, write, said):
    path = tmp_path / "key"
    if write is not None:
        write(path)
    with pytest.raises(KeyFileError, match=said):
        load_key(path)


def test_make_key_never_overwrites(tmp_path):
    path = tmp_path / "k.pem"
    first = make_key(path)
    assert path.stat().st_mode & 0o777 == 0o600
    with pytest.raises(FileExistsError):
        make_key(path)
    assert load_key(path).keyid == first.keyid


class CountingKey:
    """A key that counts its signatures (the signer's memo is seen by what it signs)."""

    def __init__(self, key: SigningKey):
        self.key, self.keyid, self.signed = key, key.keyid, 0

    def sign(self, data: bytes) -> bytes:
        self.signed += 1
        return self.key.sign(data)


def test_without_a_nonce_one_signature_per_base_and_second_each_verified(key):
    # Ed25519 is deterministic: the same base signed again gives the same bytes, so a signer
    # without a nonce signs each base once in its second. Every header still verifies.
    counting = CountingKey(key)
    signer = RequestSigner(counting, "https://c.example/d", ("@authority",), nonce=False)
    now = float(int(time.time()))
    a1 = signer.headers("GET", "https://a.example/1", now)
    a2 = signer.headers("GET", "https://a.example/2", now + 0.5)  # another path: not covered
    b1 = signer.headers("GET", "https://b.example/1", now + 0.6)  # another host
    a3 = signer.headers("GET", "https://a.example/3", now + 1.0)  # the next second
    assert a1 == a2 and a1 != b1 and a1 != a3
    assert "nonce" not in a1["Signature-Input"]
    assert counting.signed == 3
    base = signer.base("GET", "https://a.example/1", signer.params(int(now), int(now) + 300, None)).encode()
    assert a1["Signature"] == f"sig1=:{base64.b64encode(key.sign(base)).decode()}:"  # what signing anew makes
    for url, headers in (("https://a.example/2", a2), ("https://b.example/1", b1), ("https://a.example/3", a3)):
        assert verify(key, "GET", url, headers)
    # Covering the path, each path is its own base; with a nonce (the default) every request is.
    paths = RequestSigner(counting, "https://c.example/d", ("@authority", "@path"), nonce=False)
    assert paths.headers("GET", "https://a.example/1", now) != paths.headers("GET", "https://a.example/2", now)
    assert paths.headers("GET", "https://a.example/1", now) == paths.headers("GET", "https://a.example/1", now)
    counting.signed = 0
    default = RequestSigner(counting, "https://c.example/d", ("@authority",))
    assert default.headers("GET", "https://a.example/1", now) != default.headers("GET", "https://a.example/1", now)
    assert counting.signed == 2
