"""`nvcregen init`: a commented starter Site for one catalog GPU model.

`starter.py` decides what goes in (catalog facts, a plan, a window that fits);
`writer.py` writes it as commented YAML.
"""
