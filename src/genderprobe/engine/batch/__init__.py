"""``--batch``: send a run's missing requests through the provider's batch API, at half price.

``openai:`` models use OpenAI's Files and Batches endpoints, ``anthropic:``
models the Message Batches API. Batch ids live in the response store (the
``batches`` table, see :mod:`genderprobe.engine.batch.ledger`), so a killed run resumes
polling the same batches instead of paying for them again. What a batch does
not answer goes the normal way. See docs/batch.md.
"""

from genderprobe.engine.batch.job import answer_by_batch, refuse_batch_early, require_batch_api

__all__ = ["answer_by_batch", "refuse_batch_early", "require_batch_api"]
