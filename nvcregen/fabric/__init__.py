"""The network fabric: node inventories, leaf placement, fabric-aware groups, finding a fault.

See docs/design/0011-fabric.md. Pure modules; the commands read and write the files.
"""
