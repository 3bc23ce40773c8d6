"""The outputs: what a run leaves behind and shows.

The results document and its file (``results``, ``run_document``), the
records in JSON lines or Parquet, the terminal summary, the HTML report and
comparisons (``report/``), the Hugging Face dataset export and the papers'
own result tables beside a run (``paper_tables``).

It may import the analysis, the reading, the engine's accounting, the
registry, the contract and the base; never the interfaces.
"""
