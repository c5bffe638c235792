"""GPU burn-in: DCGM's targeted stress, a sustained GEMM load on every GPU of a node."""
