"""Checkpointed training: steps and checkpoint saves, goodput measured (NVCRE only)."""
