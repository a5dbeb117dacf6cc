"""One template per LLM task (`*.md`), shipped as package data; core/prompts.py reads and renders them."""
