"""Deciding the rewrite: which calls, which externs, which operands, as edits."""
