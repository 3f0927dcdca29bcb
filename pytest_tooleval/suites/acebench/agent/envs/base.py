"""BaseApi: the phone's Wi-Fi and login flags, shared by every phone class (acebench-agent §3.1)."""

from __future__ import annotations

import copy
import operator
from collections.abc import Mapping
from typing import ClassVar

from ...plain import entries

LANGUAGES = ("en", "zh")


class Scenario:
    """What every simulated class shares: a language, its message table and its API allow-list.

    Subclasses list the methods a model may call in ``API_METHODS`` (and per-language additions in
    ``LANGUAGE_METHODS``); dispatch never reaches any other attribute. ``TEXT`` maps a message key to the
    en and zh wording, copied character for character because the model reads them.
    """

    API_METHODS: ClassVar[tuple[str, ...]] = ()
    LANGUAGE_METHODS: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    TEXT: ClassVar[Mapping[str, Mapping[str, str]]] = {}

    def __init__(self, language: str = "en") -> None:
        if language not in LANGUAGES:
            raise ValueError(f"language must be one of {LANGUAGES}, got {language!r}")
        self._language = language

    @classmethod
    def api_methods(cls, language: str) -> tuple[str, ...]:
        """Names of the public methods upstream exposes for this class in ``language``."""
        return cls.API_METHODS + tuple(cls.LANGUAGE_METHODS.get(language, ()))

    def exposes(self, name: str) -> bool:
        """Whether a model may call ``name`` on this instance (the allow-list; never ``getattr`` on a guess)."""
        return name in self.api_methods(self._language)

    def _load_scenario(self, config: object) -> None:
        """Apply one ``initial_config`` entry, whatever it is (upstream calls this twice, see
        envs.build_environment)."""

    def _text(self, key: str, **values: object) -> str:
        # str.format renders values exactly as upstream's f-strings do (format(value, "")).
        return self.TEXT[self._language][key].format(**values)

    def _ok(self, key: str, **values: object) -> dict[str, object]:
        return {"status": True, "message": self._text(key, **values)}

    def _fail(self, key: str, **values: object) -> dict[str, object]:
        return {"status": False, "message": self._text(key, **values)}


class BaseApi(Scenario):
    """Wi-Fi and device login. The phone classes inherit both methods, so one call reaches them all."""

    API_METHODS: ClassVar[tuple[str, ...]] = ("turn_on_wifi", "login_device")
    TEXT: ClassVar[Mapping[str, Mapping[str, str]]] = {
        "en": {"wifi_on": "Wi-Fi has been turned on", "device_login": "Device has been logged in"},
        "zh": {"wifi_on": "wifi已经打开", "device_login": "设备已经登录"},
    }

    def __init__(self, language: str = "en") -> None:
        super().__init__(language)
        self.wifi: object = False
        self.logged_in: object = True

    def _load_scenario(self, config: object) -> None:
        # Values are taken verbatim, whatever their type (acebench-agent §2.1); the entry is used as a dict.
        settings = entries(config, "get")
        self.wifi = copy.deepcopy(settings.get("wifi", False))
        self.logged_in = copy.deepcopy(settings.get("logged_in", True))

    def turn_on_wifi(self) -> dict[str, object]:
        self.wifi = True
        return self._ok("wifi_on")

    def login_device(self) -> dict[str, object]:
        self.logged_in = True
        return self._ok("device_login")


def with_text(
    parent: Mapping[str, Mapping[str, str]], own: Mapping[str, Mapping[str, str]]
) -> dict[str, dict[str, str]]:
    """A subclass message table: the parent's entries plus its own, per language."""
    return {lang: {**parent.get(lang, {}), **own.get(lang, {})} for lang in LANGUAGES}


def is_false(flag: object) -> bool:
    """Upstream tests its flags with ``== False`` (so 0 counts as off and None as on); keep that."""
    return bool(flag == False)  # noqa: E712  (ACEBench quirk: equality, not truthiness; acebench-agent §3)


def lowered(value: object) -> str | bytes | bytearray:
    """``value.lower()`` on whatever the model sent or a method stored: a value without it fails as Python fails."""
    if isinstance(value, (str, bytes, bytearray)):
        return value.lower()
    raise AttributeError(f"'{type(value).__name__}' object has no attribute 'lower'")


def lowered_in(needle: object, haystack: object) -> bool:
    """Upstream's ``needle.lower() in haystack.lower()``: evaluated in that order, with Python's errors (a bytes
    needle in a str haystack raises the TypeError ``in`` raises)."""
    lowered_needle = lowered(needle)
    return operator.contains(lowered(haystack), lowered_needle)
