"""Each suite's options are a typed model of its own (`options_model`), the same set of the same types as the
suite's rows of the options table."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from pytest_tooleval.settings.options import Option, _value_type
from pytest_tooleval.suites import registered
from toy_suite.toyecho import SUITE as TOYECHO


def declared_and_parsed(model: type[BaseModel], options: tuple[Option, ...]) -> tuple[dict[str, object], ...]:
    declared = {name: field.annotation for name, field in model.model_fields.items() if name != "sources"}
    return declared, {option.name.replace("-", "_"): _value_type(option) for option in options}


@pytest.mark.parametrize("suite", [*registered().values(), TOYECHO], ids=lambda suite: suite.name)
def test_a_suites_options_model_declares_its_options(suite: object) -> None:
    declared, parsed = declared_and_parsed(suite.options_model, tuple(suite.options))  # type: ignore[attr-defined]
    assert declared == parsed

