"""``--executor ray``: a pool of Ray workers that looks like one model to the runner.

The runner stays in this process and stays the only store writer: it looks up
the cache, then awaits :meth:`RayPool.generate` for each missing request with
enough concurrency to keep every worker busy. The pool gathers those requests
into shards, sends each shard to the least loaded worker, and resolves each
request as its answer streams back; the runner writes answers to the store as
they arrive, exactly as for a local backend.

A worker that dies (killed, out of memory, node lost) is replaced by a fresh
one, and the requests it had not answered yet go back to the front of the
queue: nothing is lost, and nothing already answered is asked again.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from typing import Any

from genderprobe.engine.executors.ray_worker import BackendWorker, Failure
from genderprobe.errors import ModelError, UserError
from genderprobe.models.base import Model, ModelOptions, Request, Response

# Environment variables a worker's backend may read; sent along so remote nodes
# behave like this machine.
FORWARDED_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "HF_HOME", "HF_HUB_OFFLINE")
LOCAL_BATCH = 64  # requests per forward pass on a local-weights worker


class RayPool(Model):
    """Answers requests on Ray workers. ``runner_concurrency`` keeps them all busy."""

    batch_native = False

    def __init__(
        self,
        spec: str,
        options: ModelOptions,
        *,
        workers: int | None = None,
        address: str | None = None,
        concurrency: int = 8,
        worker_cpus: float = 1.0,
        worker_gpus: float | None = None,
        batch: int = LOCAL_BATCH,
        max_replacements: int | None = None,
    ):
        self._ray, self._owns_ray = _start_ray(address)
        self._actors: list[Any] = []
        try:
            self._start(spec, options, workers, concurrency, worker_cpus, worker_gpus, batch, max_replacements)
        except BaseException:
            self.close()  # the workers started so far, and Ray if this pool started it
            raise

    def _start(self, spec, options, workers, concurrency, worker_cpus, worker_gpus, batch, max_replacements):
        self._spec_asked = spec
        self._options = options
        self._env = {k: os.environ[k] for k in (*FORWARDED_ENV, options.api_key_env or "") if k in os.environ}
        self._concurrency = max(1, concurrency)
        self._batch = max(1, batch)
        gpus = worker_gpus if worker_gpus is not None else _default_gpus(spec, self._ray)
        self._actor_class = self._ray.remote(BackendWorker).options(
            num_cpus=worker_cpus, num_gpus=gpus, max_restarts=0, max_concurrency=1000
        )
        n = workers or _default_workers(self._ray, gpus, worker_cpus)
        if n < 1:
            raise UserError("--ray-workers must be at least 1.")
        _check_fits(self._ray, n, worker_cpus, gpus)
        self._actors = [self._new_actor() for _ in range(n)]
        try:
            info = self._ray.get([a.describe.remote() for a in self._actors])
        except self._ray.exceptions.RayError as exc:
            raise UserError(f"A Ray worker could not start the backend: {_first_line(exc)}.") from None
        first = agreed(info)
        self.spec = first["spec"]
        self._identity = first["identity"]
        self.cacheable = first["cacheable"]
        self.supports_option_scoring = first["supports_option_scoring"]
        self.supports_loglikelihood = first.get("supports_loglikelihood", False)
        self.supports_constrained_answers = first.get("supports_constrained_answers", False)
        self._local_weights = first["batch_native"]
        self.greedy_when_unset = first.get("greedy_when_unset", False)
        self.dtype = first.get("dtype")
        self.secrets = tuple(first.get("secrets", ()))
        # What one worker holds at once: two batches (one running, one queued) for
        # local weights, the per-worker concurrency for API clients.
        self._capacity = 2 * self._batch if self._local_weights else self._concurrency
        self.runner_concurrency = n * self._capacity
        self.workers = n
        self.replaced = 0
        self._max_replacements = max_replacements if max_replacements is not None else 2 * n + 2
        self._outstanding = [0] * n
        self._ready = [True] * n
        self._queue: list[tuple[Request, asyncio.Future]] = []
        self._wake: asyncio.Event | None = None
        self._dispatcher: asyncio.Task | None = None
        self._shards: set[asyncio.Task] = set()
        self._failed: str | None = None

    @property
    def identity(self) -> str:
        return self._identity

    def worker_pids(self) -> list[int]:
        """Process ids of the current workers (for operators and tests)."""
        return [self._ray.get(a.describe.remote())["pid"] for a in self._actors]

    # -- the runner's side ------------------------------------------------------

    async def generate(self, request: Request) -> Response:
        if self._failed:
            raise ModelError(self._failed, kind="executor", fatal=True)
        self._start_dispatcher()
        future = asyncio.get_running_loop().create_future()
        self._queue.append((request, future))
        self._wake.set()
        outcome = await future
        if isinstance(outcome, Failure):
            raise outcome.error()
        return outcome

    def generate_batch(self, requests: Sequence[Request]) -> list[Response]:
        """Synchronous use outside the runner (benchmarks, scripts)."""

        async def all_of() -> list[Response]:
            return list(await asyncio.gather(*(self.generate(r) for r in requests)))

        loop = asyncio.new_event_loop()
        try:
            return loop.run_until_complete(all_of())
        finally:
            loop.run_until_complete(self.aclose())
            loop.close()

    async def aclose(self) -> None:
        # Shards whose answers all arrived may still wait for their stream's end.
        tasks = [*self._shards, *([self._dispatcher] if self._dispatcher else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._dispatcher = None
        self._wake = None

    def close(self) -> None:
        try:
            for actor in self._actors:
                try:
                    self._ray.get(actor.close.remote(), timeout=30)
                except Exception:  # noqa: BLE001 - a dead worker has nothing to close
                    pass
                self._ray.kill(actor)
            self._actors = []
        finally:
            if self._owns_ray and self._ray.is_initialized():
                self._ray.shutdown()

    # -- dispatching -----------------------------------------------------------

    def _start_dispatcher(self) -> None:
        if self._dispatcher is None or self._dispatcher.done():
            self._wake = asyncio.Event()
            self._dispatcher = asyncio.ensure_future(self._dispatch())

    async def _dispatch(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._queue:
                slot = self._least_loaded()
                if slot is None:
                    break
                take = min(self._capacity - self._outstanding[slot], len(self._queue))
                if self._local_weights:
                    take = min(take, self._batch)
                shard, self._queue[:take] = self._queue[:take], []
                self._outstanding[slot] += len(shard)
                task = asyncio.ensure_future(self._run_shard(slot, shard))
                self._shards.add(task)
                task.add_done_callback(self._shards.discard)

    def _least_loaded(self) -> int | None:
        free = [(self._outstanding[i], i) for i in range(len(self._actors))
                if self._ready[i] and self._outstanding[i] < self._capacity]
        return min(free)[1] if free else None

    async def _run_shard(self, slot: int, shard: list[tuple[Request, asyncio.Future]]) -> None:
        actor = self._actors[slot]
        left = dict(enumerate(shard))
        try:
            stream = actor.answer.remote([(n, r) for n, (r, _) in left.items()])
            async for ref in stream:
                for n, outcome in await ref:
                    _, future = left.pop(n)
                    if not future.done():
                        future.set_result(outcome)
                    self._outstanding[slot] -= 1
                self._nudge()
        except self._ray.exceptions.RayActorError:
            self._outstanding[slot] -= len(left)
            self._queue[:0] = list(left.values())  # unanswered: first in line again
            await self._replace(slot, actor)
        except Exception as exc:  # noqa: BLE001 - a bug in a worker becomes errors the runner retries
            self._outstanding[slot] -= len(left)
            failure = Failure(f"Ray worker failed: {_first_line(exc)}", "worker_error", False, None, None)
            for _, future in left.values():
                if not future.done():
                    future.set_result(failure)
        finally:
            self._nudge()

    def _nudge(self) -> None:
        if self._wake is not None:
            self._wake.set()

    async def _replace(self, slot: int, dead: Any) -> None:
        if self._actors[slot] is not dead:
            return  # another shard of the same worker is already replacing it
        self._ready[slot] = False
        # A worker that is only unreachable may still hold its GPU and its shard.
        self._ray.kill(dead)
        while True:
            self.replaced += 1
            if self.replaced > self._max_replacements:
                self._fail(
                    f"Ray workers died {self.replaced} times; check the workers' memory and logs, "
                    f"then run again to resume."
                )
                return
            fresh = self._actors[slot] = self._new_actor()
            try:
                info = await fresh.describe.remote()
            except self._ray.exceptions.RayActorError:
                continue  # died while starting: another replacement, within the limit
            if info["error"] or info["identity"] != self._identity:
                why = info["error"] or "it loaded a different model (do the nodes hold the same weights?)"
                self._fail(f"a replacement Ray worker could not take over: {why.rstrip('.')}")
                return
            self._ready[slot] = True
            return

    def _fail(self, message: str) -> None:
        """Stop the run: every request still queued gets a fatal error."""
        self._failed = message
        for _, future in self._queue:
            if not future.done():
                future.set_result(Failure(message, "executor", True, None, None))
        self._queue.clear()

    def _new_actor(self) -> Any:
        return self._actor_class.remote(self._spec_asked, self._options, self._env, self._concurrency, self._batch)


def agreed(info: list[dict[str, Any]]) -> dict[str, Any]:
    """The workers' common description; one sentence when they cannot all serve the run."""
    errors = [i["error"] for i in info if i["error"]]
    if errors:
        raise UserError(errors[0])
    if len({i["identity"] for i in info}) > 1:
        raise UserError(
            "The Ray workers loaded different models (the model files differ between nodes); "
            "put the same model directory on every node."
        )
    return info[0]


def _first_line(exc: BaseException) -> str:
    cause = getattr(exc, "cause", None) or exc  # a RayTaskError carries the worker's exception
    text = str(cause).strip()
    return text.splitlines()[0].rstrip(".") if text else type(cause).__name__


def _start_ray(address: str | None) -> tuple[Any, bool]:
    """Ray, initialised, and whether this call started it (then the pool shuts it down)."""
    try:
        import ray
    except ModuleNotFoundError:
        raise UserError("The ray executor needs the ray package; install it with: pip install 'genderprobe[ray]'.") from None
    if ray.is_initialized():
        return ray, False
    address = address or os.environ.get("RAY_ADDRESS") or None
    try:
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            # A private instance on this machine: Ray's single-machine mode keeps
            # every connection on the loopback interface.
            os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
            ray.init(include_dashboard=False, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise UserError(f"Cannot join the Ray cluster at {address or 'a new local instance'}: {_first_line(exc)}.") from None
    return ray, True


def _default_gpus(spec: str, ray: Any) -> float:
    """A GPU per local-weights worker where the cluster has GPUs; none otherwise
    (hf on CPUs, or vLLM's CPU build; a GPU build of vLLM then refuses in its worker)."""
    if spec.startswith(("vllm:", "hf:")) and ray.cluster_resources().get("GPU", 0) >= 1:
        return 1.0
    return 0.0


def _check_fits(ray: Any, workers: int, cpus: float, gpus: float) -> None:
    """Refuse workers the cluster cannot hold: Ray would wait for them forever."""
    resources = ray.cluster_resources()
    for name, each in (("GPU", gpus), ("CPU", cpus)):
        have = resources.get(name, 0)
        if each and workers * each > have:
            raise UserError(
                f"{workers} Ray workers with {each:g} {name}s each need {workers * each:g} {name}s "
                f"and the Ray cluster has {have:g}; use fewer --ray-workers."
            )


def _default_workers(ray: Any, gpus: float, cpus: float) -> int:
    """One worker per GPU for GPU backends, else one per CPU."""
    resources = ray.cluster_resources()
    if gpus:
        return max(1, int(resources.get("GPU", 0) // gpus))
    return max(1, int(resources.get("CPU", 1) // max(cpus, 1e-9)))
