"""GPT4Tools test-set scoring: data loading (data.py), upstream metrics (metrics.py), Verdicts (scoring.py)."""
