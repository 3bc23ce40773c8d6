"""The engine: getting answers for a probe's requests, each paid for once, none lost.

It owns everything with side effects on the way to an answer: the runner
(concurrency, pacing, retries), the response store and its writer, claims
between processes, the spill file for a full disk, provider batch APIs
(``batch/``), pools of workers (``executors/``), the dry run that counts
without sending, the accounting of requests and cost, and the thread a run
takes inside a running event loop.

It may import the models and the base (errors, models.base); never the
analysis, the outputs or the interfaces, and no study.
"""

import logging

# Retries and throttling are logged for programs that configure logging; without a
# handler of their own Python would print each warning to standard error, one line
# per 429. The progress line and the end-of-run summary count them instead.
logging.getLogger(__name__).addHandler(logging.NullHandler())
