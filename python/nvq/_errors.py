"""The exceptions this package raises: all are nvq.Error.

Error: the base.  ConnectError: nvqd cannot be reached.  ProtocolError: a
frame that nvqd or this package should not have sent.  RequestError: nvqd
refused a request; its message is nvqd's own sentence (NoSuchJob where it
names no such job).  JobError: a job ended without the result an Executor
waited for, with nvqd's state and reason.
"""
from __future__ import annotations

from typing import Optional


class Error(Exception):
    """Anything nvq could not do; str() is one line saying why."""

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


class ConnectError(Error):
    """nvqd's socket could not be reached, or the connection broke."""


class ProtocolError(Error):
    """A malformed frame, or a request too large to send."""


class RequestError(Error):
    """nvqd refused a request; the message is nvqd's."""


class NoSuchJob(RequestError):
    """nvqd knows no such job."""


class JobError(Error):
    """A job ended without a result: killed, cancelled, out of time, failed to start.

    Attributes: job_id, state (nvqd's: FAILED, CANCELLED, TIMEOUT, NODE_FAIL,
    or COMPLETED where the job wrote no result), reason (nvqd's, may be
    empty), exit_code and signal (None where nvqd has none).
    """

    def __init__(self, message: str, job_id: int = 0, state: str = "", reason: str = "",
                 exit_code: Optional[int] = None, signal: Optional[int] = None) -> None:
        super().__init__(message)
        self.job_id = job_id
        self.state = state
        self.reason = reason
        self.exit_code = exit_code
        self.signal = signal


def request_error(text: str) -> RequestError:
    """nvqd's refusal as the RequestError that fits it."""
    if text.startswith("no such job"):
        return NoSuchJob(text)
    return RequestError(text)
