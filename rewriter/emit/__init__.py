"""Writers of text beside the rewrite: C headers, FFI adapters, JSON, notebook HTML."""
