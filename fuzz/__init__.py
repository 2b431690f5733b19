"""Mutation fuzzing of the rewrite: ``python -m fuzz.rewrite --help``."""
