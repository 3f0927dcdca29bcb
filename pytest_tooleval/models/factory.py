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
    return ModelAccess("chat", chat=chat, roles=_role_functions(settings, cache_dir, engine))


def _role_functions(settings: Settings, cache_dir: Path, engine: Engine) -> dict[str, ChatFn]:
    """One chat function per configured helper role: `--tooleval-<role>-model` with its own endpoint, key,
    temperature and max_tokens options where the role declares them (otherwise the agent's endpoint and key)."""
    roles = {}
    for key, value in settings.values.items():
        if not key.endswith("_model") or key == "model" or not value:
            continue
        role = key[: -len("_model")]
        option = settings.values.get
        roles[role] = _chat_function(
            settings, cache_dir, engine, value,
            option(f"{role}_base_url") or settings.base_url,
            option(f"{role}_api_key") or settings.api_key,
            option(f"{role}_temperature"),
            option(f"{role}_max_tokens"),
        )
    return roles


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
