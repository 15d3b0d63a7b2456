"""What both OpenAI-protocol providers share: the HTTP client, the error boundary, the idle timeout.

* ``post_target(options, access)``: the ``http_post.PostTarget`` of one
  ``[model_providers.NAME]`` table: explicit ``base_url`` (never an ``OPENAI_BASE_URL`` lookup),
  ``http_headers``, ``query_params``, ``request_max_retries`` as request retries,
  ``stream_idle_timeout_ms`` as the read timeout (a server that never sends headers times out
  too), and the organization/project the CLI read from ``OPENAI_ORG_ID`` /
  ``OPENAI_PROJECT_ID``. A provider without an API key (``env_key`` unset, typical for local
  servers) sends no ``Authorization`` header at all (``ProviderAccess``).
* ``map_openai_errors(access)``: the one place where HTTP, JSON and validation failures
  become ``models.errors`` classes named after the provider
  (``classify_http_status`` for HTTP statuses, ``classify_stream_failure`` for errors reported
  inside a stream).
* ``next_event(iterator, idle_timeout_s)``: the next stream event or a retryable ``Timeout`` when
  the server stays silent for ``stream_idle_timeout_ms``.

The ``openai`` SDK is not imported on the request path (``models.http_post`` sends the
pre-serialized bodies). The SDK's typed ``create`` path, which the byte-equality tests compare
against, lives with those tests (``tests/models/sdk_reference.py``): each client sends through
one ``_send`` method that the reference overrides.

What does not belong here: request bodies and event mapping (``openai_responses``,
``chat_completions``), retry decisions (``models.retry`` + the runtime).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Self, TypeVar

import anyio
import httpx2
import msgspec
import pydantic

from mini_codex.errors import ConfigError
from mini_codex.models.base import ModelClientOptions
from mini_codex.models.errors import (
    AuthenticationError,
    ContextWindowExceeded,
    ProviderError,
    StreamError,
    Timeout,
)
from mini_codex.models.http_post import HttpPost, PostTarget, transport_error
from mini_codex.models.tokens import ItemTokenCache

DEFAULT_BASE_URL = "https://api.openai.com/v1"
CONNECT_TIMEOUT_S = 10.0

_T = TypeVar("_T")


class ProviderAccess(msgspec.Struct, frozen=True):
    """Where a provider lives and how it is named in messages."""

    provider_name: str
    base_url: str
    env_key: str | None
    has_api_key: bool

    @property
    def label(self) -> str:
        return f"model provider {self.provider_name!r} ({self.base_url})"


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


# --- the error boundary -------------------------------------------------------------------------


def with_provider_label(error: ProviderError, access: ProviderAccess) -> ProviderError:
    """The same error class with the provider named (the context-window message stays as is)."""
    if isinstance(error, ContextWindowExceeded) or str(error).startswith(access.label):
        return error
    message = f"{access.label}: {error}"
    if isinstance(error, AuthenticationError) and access.env_key:
        message += f" (the key is read from {access.env_key})"
    return type(error)(message, status=error.status, retry_after_s=error.retry_after_s)


def classify_openai_error(exc: BaseException, access: ProviderAccess) -> ProviderError | None:
    """The classified error for a foreign exception, or None if it is not a provider failure."""
    error: ProviderError
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
    """Translate HTTP/decoding failures raised inside the block into ``ProviderError``s named
    after the provider."""
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

    Requests go out as pre-serialized bodies through ``models.http_post`` (no SDK import).
    """

    def __init__(
        self,
        post: HttpPost,
        access: ProviderAccess,
        *,
        idle_timeout_s: float,
        options: ModelClientOptions | None = None,
    ) -> None:
        self._post = post
        self.access = access
        self.idle_timeout_s = idle_timeout_s
        self.options = options
        """What the client was built from (None when built from parts)."""
        self.token_cache = ItemTokenCache()
        """Per-item token estimates for responses without usage (``models.tokens``)."""

    @classmethod
    def from_options(
        cls, options: ModelClientOptions, *, http_client: httpx2.AsyncClient | None = None
    ) -> Self:
        """The registry factory; ``http_client`` lets tests inject a ``MockTransport``."""
        access = provider_access(options)
        post = HttpPost(post_target(options, access), http_client)
        return cls(post, access, idle_timeout_s=idle_timeout_s(options), options=options)

    async def aclose(self) -> None:
        await self._post.aclose()
