"""`*.tooleval.yaml` texts the plugin tests write into their pytester folders."""

from __future__ import annotations

#: one tool (get_weather) and two cases, a call and none; `{system}` is a `system:` line, or "" for none
TOOL_FILE = """\
category: desk
{system}tools:
  - name: get_weather
    description: The weather forecast for a city.
    parameters:
      type: object
      properties:
        city: {{type: string, description: "The city, e.g. Paris"}}
      required: [city]
cases:
  - name: weather
    user: What is the weather in Paris?
    expect:
      calls:
        - name: get_weather
          arguments: {{city: Paris}}
  - name: chat
    user: Thank you, that is all.
    expect:
      no_call: true
"""
