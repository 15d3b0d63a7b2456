"""The reference request path of the byte-equality tests: the ``openai`` SDK's typed ``create``.

``SdkResponsesClient`` and ``SdkChatClient`` are our two OpenAI-protocol clients with their
``_send`` replaced by the SDK's ``responses.create`` / ``chat.completions.create`` (the same
request body, as keyword arguments), so everything else — history, the next request, the trace —
runs through our code on both paths. The SDK's own exceptions are translated into
``models.errors`` classes here, as the SDK path of ``src/`` once did.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime
from typing import Any

import httpx2
import openai

from mini_codex.models.base import ModelClientOptions, Prompt
from mini_codex.models.chat_completions import ChatCompletionsClient
from mini_codex.models.errors import ConnectionFailed, InvalidRequest, ProviderError, Timeout
from mini_codex.models.http_post import retry_after_text
from mini_codex.models.openai_responses import OpenAIResponsesClient
from mini_codex.models.openai_sdk import CONNECT_TIMEOUT_S, idle_timeout_s
from mini_codex.models.retry import classify_http_status, classify_stream_failure

_UNUSED_API_KEY = "no-key"
"""Placeholder the SDK insists on; the header itself is omitted per request."""


def async_openai(options: ModelClientOptions, base_url: str) -> openai.AsyncOpenAI:
    provider = options.provider
    query: Mapping[str, object] | None = dict(provider.query_params) or None
    idle = idle_timeout_s(options)
    return openai.AsyncOpenAI(
        api_key=options.api_key or _UNUSED_API_KEY,
        base_url=base_url,
        organization=options.organization,
        project=options.project,
        default_headers=dict(provider.http_headers) or None,
        default_query=query,
        max_retries=provider.request_max_retries,
        timeout=httpx2.Timeout(idle, connect=min(idle, CONNECT_TIMEOUT_S)),
    )


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


def sdk_error(exc: BaseException) -> ProviderError | None:
    """The ``models.errors`` class of one of the SDK's exceptions (None: not the SDK's)."""
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


class _Translated:
    """An SDK stream whose exceptions come out as ``models.errors`` classes."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._events = self._iterate()

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._events

    async def _iterate(self) -> AsyncIterator[Any]:
        try:
            async for event in self._stream:
                yield event
        except Exception as exc:
            mapped = sdk_error(exc)
            if mapped is None:
                raise
            raise mapped from exc

    async def close(self) -> None:
        await self._stream.close()


class _SdkPath:
    access: Any
    options: ModelClientOptions | None
    _sdk: openai.AsyncOpenAI | None = None

    @property
    def sdk(self) -> openai.AsyncOpenAI:
        if self._sdk is None:
            assert self.options is not None, "build the client with from_options"
            self._sdk = async_openai(self.options, self.access.base_url)
        return self._sdk

    def headers(self) -> dict[str, Any]:
        """An explicitly omitted ``Authorization`` when there is no key."""
        return {} if self.access.has_api_key else {"Authorization": openai.Omit()}

    async def create(self, call: Any, body: dict[str, Any]) -> _Translated:
        try:
            return _Translated(await call(**body, stream=True, extra_headers=self.headers()))
        except Exception as exc:
            mapped = sdk_error(exc)
            if mapped is None:
                raise
            raise mapped from exc

    async def close_sdk(self) -> None:
        if self._sdk is not None:
            await self._sdk.close()


class SdkResponsesClient(_SdkPath, OpenAIResponsesClient):
    async def _send(self, prompt: Prompt) -> Any:
        return await self.create(self.sdk.responses.create, self.request_body(prompt))

    async def aclose(self) -> None:
        await OpenAIResponsesClient.aclose(self)
        await self.close_sdk()


class SdkChatClient(_SdkPath, ChatCompletionsClient):
    async def _send(self, body: dict[str, Any]) -> Any:
        return await self.create(self.sdk.chat.completions.create, body)

    async def aclose(self) -> None:
        await ChatCompletionsClient.aclose(self)
        await self.close_sdk()
