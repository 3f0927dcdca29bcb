"""Build the ModelAccess a run uses from its settings: `oracle`, `replay:PATH` or a live model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..config import Settings
from ..engine import Engine
from .access import ChatFn, ModelAccess
from .base import ChatRequest, Reply
from .replay import load_replay


def build_access(settings: Settings, cache_dir: Path, engine: Engine) -> ModelAccess:
    model: str = settings.model
    if model == "oracle":
        return ModelAccess("oracle")
    if model.startswith("replay:"):
        return ModelAccess("replay", replay=load_replay(model[len("replay:"):]))
    chat = _chat_function(settings, cache_dir, engine, model, settings.base_url, settings.api_key,
                          settings.temperature, settings.max_tokens)
    user_chat = None
    if settings.user_model:
        user_chat = _chat_function(settings, cache_dir, engine, settings.user_model,
                                   settings.user_base_url or settings.base_url,
                                   settings.user_api_key or settings.api_key,
                                   settings.user_temperature, 1000)  # ACEBench's simulator: max_tokens 1000
    return ModelAccess("chat", chat=chat, user_chat=user_chat)


def _chat_function(settings: Settings, cache_dir: Path, engine: Engine, model: str, base_url: str | None,
                   api_key: str | None, temperature: float | None, max_tokens: int | None) -> ChatFn:
    from .cache import CachedBackend, ResponseCache
    from .openai_compat import OpenAIBackend

    backend: Any = OpenAIBackend(
        model=model,
        base_url=base_url,
        api_key=api_key,
        timeout=settings.timeout,
        max_retries=settings.max_retries,
        max_concurrency=max(1, settings.concurrency),
    )
    engine.on_close(backend.aclose)
    if not settings.no_cache:
        backend = CachedBackend(backend, ResponseCache(cache_dir / "responses.sqlite"))

    async def chat(messages: list[dict[str, str]]) -> Reply:
        request = ChatRequest(tuple(messages), temperature=temperature, top_p=settings.top_p, max_tokens=max_tokens)
        return await backend.complete(request)

    return chat
