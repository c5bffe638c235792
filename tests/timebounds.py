"""The one wall-clock bound of the tests: a guard against hangs, never a speed target.

Tests of hostile input (catastrophic backtracking, alias bombs, deep nesting) assert that
a call returns within `HANG` seconds: what they guard against takes hours, while the
work itself takes about a second, even on a loaded 2-core machine. Speed targets live in
`make bench`, measured as ratios within one run.
"""

HANG = 60.0
