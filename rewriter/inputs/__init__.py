"""Getting text in and out: files, stdin/stdout, MLIR bytecode and jax exports."""
