"""An HTTP transport that builds its TLS context on the first ``https`` request, not at start-up.

``httpx2.AsyncClient()`` builds a verifying ``ssl.SSLContext`` when it is created: loading the
CA bundle costs 0.1-0.4 s here, before the first request byte, even when the provider is a plain
``http://`` server on 127.0.0.1 (a local model, the test server). ``LazyTlsTransport`` keeps two
inner transports with the same options: one for ``http`` URLs (built with ``verify=False``,
whose context is never used because no TLS is spoken), built at once, and one for every other
scheme with full verification (``verify=True``, the client's default), built on the first such
request. A redirect from ``http`` to ``https`` therefore goes through the verifying transport,
as with the client's default transport.

A client given a transport ignores the proxy environment variables, so ``async_client`` uses
this transport only when none is set (``urllib.request.getproxies``, what ``httpx2`` reads);
with a proxy it is the client's default transport, as before.
"""

from __future__ import annotations

from typing import Any
from urllib.request import getproxies

import httpx2

__all__ = ["LazyTlsTransport", "async_client"]


def async_client(**options: Any) -> httpx2.AsyncClient:
    """``httpx2.AsyncClient(**options)``, with a :class:`LazyTlsTransport` unless a proxy is set
    in the environment."""
    if any(getproxies().get(scheme) for scheme in ("http", "https", "all")):
        return httpx2.AsyncClient(**options)
    return httpx2.AsyncClient(transport=LazyTlsTransport(), **options)


class LazyTlsTransport(httpx2.AsyncBaseTransport):
    """``httpx2.AsyncHTTPTransport`` (default options) whose TLS context is built when needed."""

    def __init__(self) -> None:
        self._plain = httpx2.AsyncHTTPTransport(verify=False)
        self._tls: httpx2.AsyncHTTPTransport | None = None

    def _for(self, request: httpx2.Request) -> httpx2.AsyncHTTPTransport:
        if request.url.scheme == "http":
            return self._plain
        if self._tls is None:
            self._tls = httpx2.AsyncHTTPTransport(verify=True)
        return self._tls

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        return await self._for(request).handle_async_request(request)

    async def aclose(self) -> None:
        await self._plain.aclose()
        if self._tls is not None:
            await self._tls.aclose()
