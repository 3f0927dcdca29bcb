"""The Settings model generated from the options table: typed, frozen, validated, with each value's source."""

from __future__ import annotations

from typing import Literal, get_args

import pydantic
import pytest

from pytest_tooleval.settings.options import build_settings, settings_model
from pytest_tooleval.suites import all_options
from pytest_tooleval.suites.acebench.plugin_suite import AceBenchSettings


def defaults() -> tuple[dict[str, object], dict[str, str]]:
    options = all_options()
    return ({o.name.replace("-", "_"): o.default for o in options}, {o.name: "default" for o in options})


def test_every_option_of_the_table_is_a_typed_field() -> None:
    fields = settings_model(all_options()).model_fields
    assert {o.name.replace("-", "_") for o in all_options()} | {"sources"} == set(fields)
    assert fields["temperature"].annotation is float
    assert fields["concurrency"].annotation is int
    assert fields["no_cache"].annotation is bool
    assert set(get_args(fields["language"].annotation)) == {"en", "zh", "all"}  # a choice is a Literal
    choice: object = Literal["en", "zh", "all"]  # a typing form, compared as the value it is at run time
    assert fields["language"].annotation == choice
    assert fields["top_p"].annotation == float | None  # unset by default: the endpoint's own


def test_a_value_of_the_wrong_type_is_refused_and_settings_are_frozen() -> None:
    values, sources = defaults()
    settings = build_settings(values, sources, all_options())
    assert (settings.concurrency, AceBenchSettings.of(settings).language, settings.fail_under) == (8, "en", {})
    with pytest.raises(pydantic.ValidationError):
        build_settings({**values, "concurrency": "eight"}, sources, all_options())
    with pytest.raises(pydantic.ValidationError):
        build_settings({**values, "language": "fr"}, sources, all_options())
    with pytest.raises(pydantic.ValidationError):
        settings.concurrency = 2  # frozen: the assignment is what is tested
    changed = settings.replace(concurrency=64)
    assert (changed.concurrency, settings.concurrency, changed.sources) == (64, 8, sources)
    assert settings.get("no_such_option", "fallback") == "fallback" and settings.get("sources") is None
