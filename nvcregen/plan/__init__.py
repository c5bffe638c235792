"""The test plan of a site: what runs where, its images, and what it costs.

`resolve.py` turns a site and the catalog into ordered test units (built once per site and
passed down to every layer), `images.py` resolves image pins and the mirror, `budget.py`
adds up GPU-hours and wall time against the window.
"""
