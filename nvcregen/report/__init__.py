"""`nvcregen report`: a results archive as a self-contained HTML page and a Markdown summary.

`folder.py` finds the run and verifies its SHA256SUMS, `archive.py` reads the archive's
JSON and CSV files (the contract with `nvcregen collect`), `plot.py` computes SVG
geometry, `charts.py` turns bandwidth rows and thresholds into charts, `tables.py`
builds the page's tables, `markdown.py` writes summary.md, `page.py` renders the HTML
template and `writer.py` puts it together and writes `index.html` and `summary.md`.
"""
