"""The YAML suite: tool-use test cases users write themselves, in `*.tooleval.yaml` files."""
