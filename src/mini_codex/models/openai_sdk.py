"""What both OpenAI-protocol providers share: the HTTP client, the error boundary, the idle timeout.

* ``post_target(options, access)``: the ``http_post.PostTarget`` of one
  ``[model_providers.NAME]`` table: explicit ``base_url`` (never an ``OPENAI_BASE_URL`` lookup),
  ``http_headers``, ``query_params``, ``request_max_retries`` as request retries,
  ``stream_idle_timeout_ms`` as the read timeout (a server that never sends headers times out
  too), and the organization/project the CLI read from ``OPENAI_ORG_ID`` /
  ``OPENAI_PROJECT_ID``. A provider without an API key (``env_key`` unset, typical for local
  servers) sends no ``Authorization`` header at all (``ProviderAccess``).
* ``map_openai_errors(access)``: the one place where HTTP, JSON and validation failures (and
  the SDK's, on the reference path) become ``models.errors`` classes named after the provider
  (``classify_http_status`` for HTTP statuses, ``classify_stream_failure`` for errors reported
  inside a stream).
* ``next_event(iterator, idle_timeout_s)``: the next stream event or a retryable ``Timeout`` when
  the server stays silent for ``stream_idle_timeout_ms``.

The ``openai`` SDK is not imported on the request path (``models.http_post`` sends the
pre-serialized bodies); ``build_async_openai`` builds it only for ``sdk_transform = True``, the
typed ``create`` reference path the byte-equality tests compare against.

What does not belong here: request bodies and event mapping (``openai_responses``,
``chat_completions``), retry decisions (``models.retry`` + the runtime).
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Self, TypeVar

import anyio
import httpx2
import pydantic

from mini_codex.errors import ConfigError
from mini_codex.models.base import ModelClientOptions
from mini_codex.models.errors import (
    AuthenticationError,
    ConnectionFailed,
    ContextWindowExceeded,
    InvalidRequest,
    ProviderError,
    StreamError,
    Timeout,
)
from mini_codex.models.http_post import HttpPost, PostTarget, retry_after_text, transport_error
from mini_codex.models.retry import classify_http_status, classify_stream_failure
from mini_codex.models.tokens import ItemTokenCache

if TYPE_CHECKING:
    import openai

DEFAULT_BASE_URL = "https://api.openai.com/v1"
CONNECT_TIMEOUT_S = 10.0
_UNUSED_API_KEY = "no-key"
"""Placeholder the SDK insists on; the header itself is omitted per request."""

_T = TypeVar("_T")


@dataclass(frozen=True)
class ProviderAccess:
    """Where a provider lives and how it is named in messages."""

    provider_name: str
    base_url: str
    env_key: str | None
    has_api_key: bool

    @property
    def label(self) -> str:
        return f"model provider {self.provider_name!r} ({self.base_url})"

    def request_headers(self) -> dict[str, Any]:
        """Per-request headers: an explicitly omitted ``Authorization`` when there is no key."""
        import openai

        return {} if self.has_api_key else {"Authorization": openai.Omit()}


def provider_access(options: ModelClientOptions) -> ProviderAccess:
    """The access data of ``options``; a provider that names an ``env_key`` needs its key."""
    provider = options.provider
    if provider.env_key and not options.api_key:
        raise ConfigError(
            f"model provider {options.provider_name!r} needs an API key in the environment "
            f"variable {provider.env_key}"
        )
    return ProviderAccess(
        provider_name=options.provider_name,
        base_url=(provider.base_url or DEFAULT_BASE_URL).rstrip("/"),
        env_key=provider.env_key,
        has_api_key=bool(options.api_key),
    )


def _max_retries(options: ModelClientOptions) -> int:
    retries = options.provider.request_max_retries
    if retries < 0:
        raise ConfigError(
            f"model provider {options.provider_name!r}: request_max_retries must be >= 0"
        )
    return retries


def post_target(options: ModelClientOptions, access: ProviderAccess) -> PostTarget:
    """Where and how ``options``' requests go (``models.http_post``)."""
    provider = options.provider
    return PostTarget(
        base_url=access.base_url,
        api_key=options.api_key or None,
        http_headers=dict(provider.http_headers),
        query_params=dict(provider.query_params),
        organization=options.organization,
        project=options.project,
        max_retries=_max_retries(options),
        idle_timeout_s=idle_timeout_s(options),
        connect_timeout_s=CONNECT_TIMEOUT_S,
    )


def build_async_openai(
    options: ModelClientOptions,
    access: ProviderAccess,
    *,
    http_client: httpx2.AsyncClient | None = None,
) -> openai.AsyncOpenAI:
    """The SDK client for ``options``: only the ``sdk_transform`` reference path uses it."""
    import openai

    provider = options.provider
    _max_retries(options)
    query: Mapping[str, object] | None = dict(provider.query_params) or None
    idle = idle_timeout_s(options)
    return openai.AsyncOpenAI(
        api_key=options.api_key or _UNUSED_API_KEY,
        base_url=access.base_url,
        organization=options.organization,
        project=options.project,
        default_headers=dict(provider.http_headers) or None,
        default_query=query,
        max_retries=provider.request_max_retries,
        # A server silent for the idle timeout also fails before the response headers.
        timeout=httpx2.Timeout(idle, connect=min(idle, CONNECT_TIMEOUT_S)),
        http_client=http_client,
    )


# --- the error boundary -------------------------------------------------------------------------


def _body_text(exc: openai.APIStatusError) -> str | None:
    try:
        text = exc.response.text
    except httpx2.ResponseNotRead:
        text = ""
    if text.strip():
        return text
    if exc.body is None:
        return None
    body = exc.body if isinstance(exc.body, dict) and "error" in exc.body else {"error": exc.body}
    return json.dumps(body)


def with_provider_label(error: ProviderError, access: ProviderAccess) -> ProviderError:
    """The same error class with the provider named (the context-window message stays as is)."""
    if isinstance(error, ContextWindowExceeded) or str(error).startswith(access.label):
        return error
    message = f"{access.label}: {error}"
    if isinstance(error, AuthenticationError) and access.env_key:
        message += f" (the key is read from {access.env_key})"
    return type(error)(message, status=error.status, retry_after_s=error.retry_after_s)


def _classify_sdk_error(exc: BaseException) -> ProviderError | None:
    """The SDK's own exceptions (raised on the ``sdk_transform`` reference path only)."""
    import openai

    match exc:
        case openai.APIStatusError():
            return classify_http_status(
                exc.status_code,
                _body_text(exc),
                retry_after_text(exc.response.headers),
                now=datetime.now(UTC),
            )
        case openai.APITimeoutError():
            return Timeout("the request timed out")
        case openai.APIConnectionError():
            cause = exc.__cause__ or exc
            return ConnectionFailed(f"connection failed: {cause or type(cause).__name__}")
        case openai.APIError():
            return classify_stream_failure(exc.code, exc.message)
        case openai.OpenAIError():
            return InvalidRequest(f"request failed: {exc}")
    return None


def classify_openai_error(exc: BaseException, access: ProviderAccess) -> ProviderError | None:
    """The classified error for a foreign exception, or None if it is not a provider failure."""
    error: ProviderError | None = None
    if "openai" in sys.modules:  # an SDK exception exists only once the SDK is imported
        error = _classify_sdk_error(exc)
    if error is None:
        match exc:
            case httpx2.TransportError():
                error = transport_error(exc)
            case json.JSONDecodeError() | pydantic.ValidationError():
                error = StreamError(f"malformed data in the response stream: {exc}")
            case _:
                return None
    return with_provider_label(error, access)


@contextmanager
def map_openai_errors(access: ProviderAccess) -> Iterator[None]:
    """Translate HTTP/decoding (and SDK) failures raised inside the block into ``ProviderError``s
    named after the provider."""
    try:
        yield
    except ProviderError as err:
        labeled = with_provider_label(err, access)
        if labeled is err:
            raise
        raise labeled from err
    except Exception as exc:
        mapped = classify_openai_error(exc, access)
        if mapped is None:
            raise
        raise mapped from exc


async def next_event(
    iterator: AsyncIterator[_T], idle_timeout_s: float, access: ProviderAccess
) -> _T | None:
    """The next event, None at the end of the stream; a silent server raises ``Timeout``."""
    try:
        with anyio.fail_after(idle_timeout_s), map_openai_errors(access):
            return await anext(iterator)
    except StopAsyncIteration:
        return None
    except TimeoutError:
        raise Timeout(
            f"{access.label}: no data from the response stream for {idle_timeout_s:g}s "
            "(stream_idle_timeout_ms)"
        ) from None


def idle_timeout_s(options: ModelClientOptions) -> float:
    value = options.provider.stream_idle_timeout_ms
    if value <= 0:
        raise ConfigError(
            f"model provider {options.provider_name!r}: stream_idle_timeout_ms must be > 0"
        )
    return value / 1000.0


class OpenAISdkClient:
    """What both OpenAI-protocol providers share: the HTTP client, its access, idle timeout.

    Requests go out as pre-serialized bodies through ``models.http_post`` (no SDK import);
    ``sdk_transform = True`` sends them through the SDK's typed ``create`` instead: the reference
    path that the byte-equality tests compare against (the SDK is built on first use there).
    """

    sdk_transform: bool = False

    def __init__(
        self,
        post: HttpPost,
        access: ProviderAccess,
        *,
        idle_timeout_s: float,
        options: ModelClientOptions | None = None,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        self._post = post
        self.access = access
        self.idle_timeout_s = idle_timeout_s
        self.token_cache = ItemTokenCache()
        """Per-item token estimates for responses without usage (``models.tokens``)."""
        self._options = options
        self._http_client = http_client
        self._sdk: openai.AsyncOpenAI | None = None

    @classmethod
    def from_options(
        cls, options: ModelClientOptions, *, http_client: httpx2.AsyncClient | None = None
    ) -> Self:
        """The registry factory; ``http_client`` lets tests inject a ``MockTransport``."""
        access = provider_access(options)
        post = HttpPost(post_target(options, access), http_client)
        return cls(
            post,
            access,
            idle_timeout_s=idle_timeout_s(options),
            options=options,
            http_client=http_client,
        )

    @property
    def _client(self) -> openai.AsyncOpenAI:
        """The SDK client of the ``sdk_transform`` reference path (imports ``openai``)."""
        if self._sdk is None:
            if self._options is None:
                raise RuntimeError("sdk_transform needs a client built by from_options")
            self._sdk = build_async_openai(
                self._options, self.access, http_client=self._http_client
            )
        return self._sdk

    async def aclose(self) -> None:
        await self._post.aclose()
        if self._sdk is not None:
            await self._sdk.close()
