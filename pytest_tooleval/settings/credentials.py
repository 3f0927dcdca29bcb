"""Credentials, wherever they come from, kept out of everything the plugin writes.

A run's secrets are the API keys of its models and the user:password of any endpoint URL. The HTTP client
sends a URL's user:password as a Basic `Authorization` header, so its base64 form is a secret too: a server
that echoes headers in an error body would otherwise put it in the terminal, the report and the JUnit XML.
Bearer and Basic credentials and key-like query parameters are masked in any text we write, whoever's they are.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Iterable
from urllib.parse import unquote, urlsplit, urlunsplit

MIN_SECRET_CHARS = 8  # shorter values are placeholders (EMPTY, none), and may be words of a real answer
MASK = "***"

_TOKEN = re.compile(r"[A-Za-z0-9_\-~+/=*]+")
_AUTH_SCHEME = re.compile(r"\b(Bearer|Basic|Token)(\s+)[A-Za-z0-9._~+/=\-]{8,}", re.IGNORECASE)
_KEY_PARAMETER = re.compile(
    r"([?&;](?:api[_-]?key|apikey|key|token|access[_-]?token|secret|app[_-]?key|appid|password)=)[^&;\s\"'#]+",
    re.IGNORECASE)


def url_credentials(url: str | None) -> list[str]:
    """The secrets a URL carries: its password, user:password and that pair's base64 (Basic auth)."""
    if not url:
        return []
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    if parts.password is None:
        return []
    user, password = unquote(parts.username or ""), unquote(parts.password)
    pair = f"{user}:{password}"
    return [secret for secret in (password, pair, base64.b64encode(pair.encode()).decode()) if secret]


def safe_url(url: str) -> str:
    """`url` as it may be shown: no password (the user stays), no key-like query values."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        netloc = f"{userinfo.split(':', 1)[0]}:{MASK}@{host}" if ":" in userinfo else f"{MASK}@{host}"
    shown = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return _KEY_PARAMETER.sub(lambda match: match.group(1) + MASK, shown)


def redact(text: str, secret: str | None, *, overlap: int = 6) -> str:
    """`text` without `secret`, nor any word sharing `overlap` consecutive characters with it.

    The overlap rule catches servers that echo part of a key ("Incorrect API key provided: sk-abc1****wxyz").
    """
    if not secret or len(secret) < 4:
        return text
    text = text.replace(secret, MASK)
    if len(secret) < overlap:
        return text
    grams = {secret[i : i + overlap] for i in range(len(secret) - overlap + 1)}

    def mask(match: re.Match[str]) -> str:
        word = match.group(0)
        leaks = any(word[i : i + overlap] in grams for i in range(len(word) - overlap + 1))
        return MASK if leaks else word

    return _TOKEN.sub(mask, text)


def redact_all(text: str, secrets: Iterable[str]) -> str:
    """`text` without any of `secrets` (each by `redact`), and with every credential-shaped value masked."""
    for secret in secrets:
        text = redact(text, secret)
    text = _AUTH_SCHEME.sub(lambda match: match.group(1) + match.group(2) + MASK, text)
    return _KEY_PARAMETER.sub(lambda match: match.group(1) + MASK, text)


# Secrets a stored reply may hold that a later run needs back as they were: a third-party API's key, which the
# prompt gives the agent and the agent copies into its calls (ToolAlpaca's real APIs). The response cache keeps
# each as a placeholder naming where its value comes from, and puts the value back when it reads the reply
# (models/cache.py); the value itself never reaches the file. Values shorter than MIN_SECRET_CHARS are left alone.
_STORED_AS: dict[str, str] = {}  # value -> its placeholder
_VALUES: dict[str, str] = {}  # name -> value
_PLACEHOLDER = re.compile(r"\u27e6tooleval-secret:([A-Za-z0-9_]+)\u27e7")


def keep_out_of_storage(name: str, value: str) -> None:
    """Store `value` (of the environment variable `name`) as a placeholder wherever a reply is stored."""
    if len(value) >= MIN_SECRET_CHARS:
        _STORED_AS[value] = f"\u27e6tooleval-secret:{name}\u27e7"
        _VALUES[name] = value


def sealed(text: str) -> str:
    """`text` with each secret `keep_out_of_storage` was told of as its placeholder (the longest first)."""
    if not _STORED_AS:
        return text
    for value in sorted(_STORED_AS, key=len, reverse=True):
        if value in text:
            text = text.replace(value, _STORED_AS[value])
    return text


def unsealed(text: str) -> str:
    """`text` with every placeholder `sealed` made back as its value: the one this process was told of, else the
    environment's now (one unset now stays a placeholder: the request that led to the reply held no such key,
    since a request holding one is another key of the cache)."""
    if "\u27e6" not in text:
        return text

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        return _VALUES.get(name) or os.environ.get(name) or match.group(0)

    return _PLACEHOLDER.sub(value, text)
