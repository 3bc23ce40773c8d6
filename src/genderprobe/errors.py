"""Errors a user can cause and fix. The CLI prints their message as one sentence."""


class UserError(Exception):
    """Bad input: an unknown probe or model, an impossible parameter, a bad file.

    The message must be one plain sentence saying what is wrong and how to fix it.
    """


class RunFailed(UserError):
    """A run that failed at run time, not through a mistake in the command: an
    unreachable server, too many failed requests, a store locked by another
    process. The answers received are kept; running again later resumes.
    The command line exits with 1 for these and 2 for bad input."""


class ModelError(Exception):
    """A backend failed to answer one request.

    ``fatal`` errors (bad key, unknown model, malformed request) stop the run at
    once; others are transient and retried by the runner.
    """

    def __init__(
        self,
        message: str,
        *,
        kind: str = "error",
        fatal: bool = False,
        retry_after: float | None = None,
        status: int | None = None,
    ):
        super().__init__(message)
        self.kind = kind
        self.fatal = fatal
        self.retry_after = retry_after
        self.status = status


class FatalModelError(UserError):
    """The model cannot answer any request (bad key, unknown model): stop the run."""
