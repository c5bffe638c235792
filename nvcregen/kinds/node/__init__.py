"""Node health: `nvidia-smi -q -x` and the kernel's NVRM lines, judged by nvcregen."""
