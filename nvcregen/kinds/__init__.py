"""Test kinds as plug-ins: one package per kind, one protocol, registered once.

A kind (`nccl`, `dcgm`, `node`, `training`) owns its catalog block's model and what
every layer asks of it: whether it runs per node, its time, its NVCRE options. Every
other module asks `registry.kind_of(test)` and calls the hook, never which kind it is.
"""
