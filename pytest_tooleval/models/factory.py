"""Build the ModelAccess a run uses from its settings: `oracle`, `replay:PATH` or a live model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..config import Settings
from ..engine import Engine
from .access import ChatFn, ModelAccess, access_kind
from .base import ChatRequest, Reply
from .replay import load_replay


def build_access(settings: Settings, cache_dir: Path, engine: Engine, board_path: Path) -> ModelAccess:
    model: str = settings.model
    kind = access_kind(settings)
    if kind == "oracle":
        return ModelAccess("oracle")
    if kind == "replay":
        # helper roles stay live: a replayed ToolAlpaca episode is judged again by the judge model
        return ModelAccess("replay", replay=load_replay(model[len("replay:"):]),
                           roles=_role_functions(settings, cache_dir, engine, None))
    limiter = None
    if settings.rpm or settings.tpm:
        from .limits import SharedRateLimiter

        limiter = SharedRateLimiter(board_path.with_suffix(".limits.sqlite"), settings.rpm, settings.tpm)
        engine.on_close(_closing(limiter.close))
    chat = _chat_function(settings, cache_dir, engine, model, settings.base_url, settings.api_key,
                          settings.temperature, settings.max_tokens, limiter)
    return ModelAccess("chat", chat=chat, roles=_role_functions(settings, cache_dir, engine, limiter))


def _role_functions(settings: Settings, cache_dir: Path, engine: Engine, limiter: Any) -> dict[str, ChatFn]:
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
            limiter if not option(f"{role}_base_url") else None,  # the limits are the agent endpoint's
        )
    return roles


def _chat_function(settings: Settings, cache_dir: Path, engine: Engine, model: str, base_url: str | None,
                   api_key: str | None, temperature: float | None, max_tokens: int | None,
                   limiter: Any = None) -> ChatFn:
    from .cache import CachedBackend, ResponseCache
    from .openai_compat import OpenAIBackend

    backend: Any = OpenAIBackend(
        model=model,
        base_url=base_url,
        api_key=api_key,
        timeout=settings.timeout,
        max_retries=settings.max_retries,
        max_concurrency=max(1, settings.concurrency),
        rate_limiter=limiter,
        resting=engine.resting,
    )
    engine.on_close(backend.aclose)
    if not settings.no_cache:
        cache = ResponseCache(cache_dir / "responses.sqlite")
        engine.on_close(_closing(cache.close))  # the last connection to close folds the WAL into the file
        backend = CachedBackend(backend, cache)

    run_max_tokens = max_tokens

    async def chat(messages: list[dict[str, str]], *, max_tokens: int | None = None,
                   stop: tuple[str, ...] | None = None) -> Reply:
        # a suite may override the run's max_tokens and add stop strings for its own protocol (GPT4Tools: 512)
        request = ChatRequest(tuple(messages), temperature=temperature, top_p=settings.top_p,
                              max_tokens=run_max_tokens if max_tokens is None else max_tokens, stop=stop)
        return await backend.complete(request)

    return chat


def _closing(close: Any) -> Any:
    """An engine closer (a coroutine function) for a plain close()."""

    async def closer() -> None:
        close()

    return closer
