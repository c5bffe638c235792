"""Reading results back from a cluster or a folder of exported objects (`nvcregen collect`).

`requests.py` decides what to read and delete (pure), `client.py` performs the calls
(through `nvcregen.cluster`, whose `retry.py` retries them), `source.py` reads exported
files, `model.py` holds what a collection is asked and what it gives, `collector.py`
chains it all (NVCRE mode), `trainer.py` and `podlogs.py` do the same from pod logs
(trainer mode), and `output.py` prints the outcome. The results themselves are selected,
modelled, judged and archived in `nvcregen.results`, which never imports this package.
"""
