from __future__ import annotations

import os

# One OpenBLAS thread per process, unless the environment says otherwise. Web and Celery workers run one
# process per core already, and the analysis's matrix products are small: measured on a 1,000,000-rating
# analyze (tests/bench/bench_analyze.py), OpenBLAS's default thread pool burned 0.3 s of CPU (1.80 s against
# 1.51 s) for no gain in wall time. Set before anything imports numpy.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# The Celery app (evalhub/celery.py) is not imported here: it costs a tenth of a second that every process
# would pay at django.setup() (issue 22). Each tasks module loads it (settings.EVALHUB_CELERY_APP), so a
# process that queues a task binds @shared_task to it; `celery -A evalhub` finds evalhub.celery by itself.
