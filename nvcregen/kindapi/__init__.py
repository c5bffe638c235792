"""The test kinds' seam: the protocol every kind implements and the registry that loads them.

A kind's code lives in its own package (`nvcregen/kinds/<kind>/`), above every layer it
implements; the layers below find a kind only through `registry.kind_of(test)` and the
parts it holds (`registry.part_of`), which the registry imports by module name on first
use: no module below `nvcregen.kinds` imports a kind.
"""
