"""``python -m rewriter``: see ``rewriter.cli``."""

from .cli import main

raise SystemExit(main(prog="python -m rewriter"))
