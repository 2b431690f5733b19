"""The one error both runners raise when a module cannot be loaded.

``rewriter.compile.LoadError`` and ``rewriter.iree.LoadError`` are this class: users catch
either name, and neither runner imports the other (or its own loader) to raise it.
"""

from __future__ import annotations


class LoadError(Exception):
    """A module cannot be loaded: a missing kernel, handler or import, an unreadable or
    foreign file, or a module already closed (the message says which)."""
