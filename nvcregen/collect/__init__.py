"""Reading results back from a cluster or a folder of exported objects (`nvcregen collect`).

`requests.py` decides what to read and delete (pure), `client.py` performs the calls
through the official kubernetes client, `source.py` reads exported files, `select.py`
picks a site's objects, `run.py` chains it all and `output.py` prints the outcome. The
results themselves are modelled, judged and archived in `nvcregen.results`.
"""
