"""One BLAS thread for the analysis commands, set before numpy loads.

The bootstrap multiplies (resamples x units) count matrices by a handful of columns: a
skinny product that one thread does at memory speed. OpenBLAS's extra worker threads
spin while they wait, and on a machine with other work running they took the CEF
analysis of 10,000 trials from 1.0 s to 2.0-2.5 s (benchmarks/RESULTS.md, analyzer
speed). The product's summation order, and so every number, is the same either way.
A value the user set (``OPENBLAS_NUM_THREADS``) is kept; a process that imported numpy
before this module keeps the thread count it started with.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
