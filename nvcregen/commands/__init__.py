"""Command groups of the nvcregen command line, registered on `nvcregen.cli.main`."""
