"""A tiny synthetic GPT4Tools test set (our own items, in the test-set format) for tests that need no upstream file.

Each instruction carries a unique tag (REQ-1, ...) in its "New input:" line, so a scripted server can answer
each item by substring.
"""

from __future__ import annotations

import json
from pathlib import Path

THOUGHT = "Thought: Do I need to use a tool? "

TOOLS = {
    "Segment the Image": "useful when you want to cut every object in an image into its own region",
    "Answer Question About The Image": "useful when you need an answer to a question about an image",
    "Generate Image From User Input Text": "useful when you want to draw a picture from a description",
}


def tool_step(action: str, args: str) -> str:
    return f"{THOUGHT}Yes\nAction: {action}\nAction Input: {args}\nObservation:\n"


def final_step(text: str) -> str:
    return f"{THOUGHT}No\nAI: {text}\n"


def instruction(request: str, image: str | None = None, history: str = "") -> str:
    tools = "\n".join(f"> {name}: {description}." for name, description in TOOLS.items())
    seen = ""
    if image:
        seen = (
            f"Human: Provide an image named {image}. Description: a dog on a red car. "
            "Understand the image using tools.\nAI: Received.\n"
        )
    return (
        "GPT4Tools can handle various text and visual tasks, such as answering questions and drawing pictures.\n\n"
        f"TOOLS:\n------\n\nGPT4Tools has access to the following tools:\n\n{tools}\n\n"
        "To use a tool, please use the following format:\n\n```\n"
        f"{THOUGHT}Yes\nAction: the action to take, should be one of the tools above\n"
        "Action Input: the input to the action\nObservation: the result of the action\n```\n\n"
        "When you have a response to say to the Human, or if you do not need to use a tool, you MUST use the "
        "format:\n\n"
        f"```\n{THOUGHT}No\nAI: [your response here]\n```\n\n"
        "Follow file name rules and do not invent file names.\n\n"
        f"Previous conversation:\n\n{seen}\nNew input: {request}\n"
        "GPT4Tools needs to use tools to observe images, not directly imagine them. Let's think step by step.\n"
        f"{history}"
    )


ITEMS: list[dict[str, object]] = [
    {
        "id": 1,
        "instruction": instruction("REQ-1 cut the dog out of the picture", "image/abcdefgh.png"),
        "input": "",
        "output": tool_step("Segment the Image", "image/abcdefgh.png"),
    },
    {
        "id": 2,
        "instruction": instruction("REQ-2 what color is the car?", "image/qwertyui.png"),
        "input": "",
        "output": tool_step("Answer Question About The Image", "image/qwertyui.png, what color is the car?"),
    },
    {
        "id": 3,
        "instruction": instruction("REQ-3 what is the capital of France?"),
        "input": "",
        "output": final_step("Paris is the capital of France."),
    },
    {
        "id": "q-4",
        "instruction": instruction(
            "REQ-4 draw a lighthouse at night",
            history=f"{THOUGHT}Yes\nAction: Generate Image From User Input Text\nAction Input: a lighthouse at night\n"
            "Observation: image/zxcvbnml.png\n",
        ),
        "input": "",
        "output": final_step("Here it is: image/zxcvbnml.png"),
    },
]

# The gold answer of each item, keyed by its tag (what a model that gets everything right says).
RIGHT = {f"REQ-{number}": str(item["output"]) for number, item in enumerate(ITEMS, start=1)}


def write_test_set(path: Path, items: list[dict[str, object]] | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(ITEMS if items is None else items, indent=1), encoding="utf-8")
    return path
