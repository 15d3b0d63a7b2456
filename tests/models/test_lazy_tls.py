"""``models/lazy_tls.py``: a plain ``http`` provider never builds a TLS context; an ``https`` URL
(also one reached by a redirect) goes through a verifying one; a proxy in the environment keeps
the client's default transport (which honours it)."""

from __future__ import annotations

import ssl

import httpx2
import pytest
from fake_openai_server import Reply, serve

from mini_codex.models.lazy_tls import LazyTlsTransport, async_client

pytestmark = pytest.mark.anyio


def _verify_mode(transport: httpx2.AsyncHTTPTransport) -> ssl.VerifyMode:
    return transport._pool._ssl_context.verify_mode  # type: ignore[attr-defined,no-any-return]


async def test_an_http_request_builds_no_tls_context() -> None:
    with serve([Reply(status=200, chunks=[b"{}"])], parse_bodies=False) as server:
        client = async_client(follow_redirects=True)
        try:
            response = await client.post(f"{server.url}/responses", content=b"{}")
            transport = client._transport
        finally:
            await client.aclose()
    assert (response.status_code, response.content) == (200, b"{}")
    assert isinstance(transport, LazyTlsTransport)
    assert transport._tls is None
    assert [request.path for request in server.requests] == ["/v1/responses"]


async def test_an_https_request_goes_through_a_verifying_context() -> None:
    # A plain-HTTP server spoken to over https: the handshake fails, after the verifying
    # transport was built for it.
    with serve([], parse_bodies=False) as server:
        client = async_client()
        try:
            with pytest.raises(httpx2.ConnectError):
                await client.get(server.url.replace("http://", "https://") + "/models")
            transport = client._transport
        finally:
            await client.aclose()
    assert isinstance(transport, LazyTlsTransport)
    assert transport._tls is not None
    assert _verify_mode(transport._tls) == ssl.CERT_REQUIRED


async def test_a_proxy_in_the_environment_keeps_the_default_transport(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    client = async_client()
    try:
        assert not isinstance(client._transport, LazyTlsTransport)
        assert _verify_mode(client._transport) == ssl.CERT_REQUIRED  # type: ignore[arg-type]
    finally:
        await client.aclose()
