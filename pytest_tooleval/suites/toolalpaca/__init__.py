"""ToolAlpaca: agent episodes against simulated or real APIs, judged by GPT-4 (toolalpaca-gpt4tools §1-§4).

data.py (cases, credentials, prompts), agent.py (the episode loop), tools.py (the tools), simulator.py (the
simulated API), parser.py (the test_v1 output format), prompts.py (rendering), judge.py (the judge),
scoring.py (verdicts and the summary table), importer.py (upstream judge files), suite.py (the facade).
"""
