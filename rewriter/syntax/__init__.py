"""Reading the textual format: positions, the whole-file scan, the grammar, parsed calls."""
