"""BFCL's web search categories: the search and page-fetch environment, with a backend the user chooses (a live
search service, or a cassette of a recorded run; docs/bfcl.md#web-search)."""
