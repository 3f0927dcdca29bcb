"""GPT4Tools' request constants, shared by the plugin object (its fingerprint and options) and the suite (its
requests): a leaf, so that neither imports the other for them."""

from __future__ import annotations

MAX_NEW_TOKENS = 512  # eval/inference.py: GenerationConfig(max_new_tokens=512)
STOP = ("Observation:",)  # the labelled variant of --tooleval-gpt4tools-stop (toolalpaca-gpt4tools §6.4.2)
