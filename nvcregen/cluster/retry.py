"""The one retry policy of every call to the API server (`check --server`, `collect`).

A request is tried at most `RetryPolicy.attempts` times. It is tried again after a
connection error or timeout (no answer), or an answer whose status is in `RETRYABLE`
(429 and 5xx), waiting what the answer's `Retry-After` header asks (in seconds, capped),
else an exponential backoff (capped), through `Cluster.sleep`. Any other answer is
returned at once. When every attempt is spent, the last answer is returned (its status
is then retryable: the caller decides what a refusal means), or `ServerUnreachableError`
is raised when the last attempt got no answer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from nvcregen.cluster.client import (
    TIMEOUT,
    Answer,
    Cluster,
    ServerUnreachableError,
    connection_errors,
    error_reason,
    send,
)

RETRYABLE = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try.

    Attributes:
        attempts: Tries per request, the first included.
        backoff: Seconds before the second try; doubled before each later one.
        max_backoff: Longest backoff between two tries.
        max_retry_after: Longest wait a `Retry-After` header may ask for.
        timeout: Connect and read timeout of one request, in seconds.
        restarts: How often a paginated listing starts over after its continue token
            expired (`collect`'s LISTs; no other call pages).

    """

    attempts: int = 5
    backoff: float = 0.5
    max_backoff: float = 8.0
    max_retry_after: float = 60.0
    timeout: tuple[float, float] = TIMEOUT
    restarts: int = 3


def send_retried(
    cluster: Cluster,
    policy: RetryPolicy,
    method: str,
    path: str,
    query: Sequence[tuple[str, str]] = (),
    body: dict[str, Any] | None = None,
    *,
    content_type: str | None = None,
    accept: str = "application/json",
) -> Answer:
    """Send one request; retry no answer, 429 and 5xx as `policy` says.

    Returns:
        The first answer whose status is not retryable, or the last answer once every
        attempt is spent.

    Raises:
        ServerUnreachableError: The last attempt got no answer; `reason` says why.

    """
    failures = connection_errors()
    attempt = 1
    while True:
        answer: Answer | None = None
        try:
            answer = send(
                cluster,
                method,
                path,
                query,
                body,
                content_type=content_type,
                accept=accept,
                timeout=policy.timeout,
            )
        except failures as exc:
            if attempt >= policy.attempts:
                raise _unreachable(cluster, error_reason(exc)) from exc
        if answer is not None and (answer.status not in RETRYABLE or attempt >= policy.attempts):
            return answer
        cluster.sleep(delay(answer, attempt, policy))
        attempt += 1


def delay(answer: Answer | None, attempt: int, policy: RetryPolicy) -> float:
    """Seconds before the next try: the server's Retry-After (capped), else backoff."""
    wait = retry_after(answer, policy.max_retry_after)
    if wait is not None:
        return wait
    return min(policy.backoff * 2.0 ** (attempt - 1), policy.max_backoff)


def retry_after(answer: Answer | None, cap: float) -> float | None:
    """The server's Retry-After in seconds, clamped to [0, cap].

    None (so the backoff applies) when absent, an HTTP date, or no number at all: a
    header such as `nan` comes from a broken server or proxy, and is ignored as HTTP
    says an invalid field is, rather than ending the run.
    """
    if answer is None or not answer.retry_after:
        return None
    try:
        seconds = float(answer.retry_after)
    except ValueError:
        return None
    return None if math.isnan(seconds) else min(max(seconds, 0.0), cap)


def _unreachable(cluster: Cluster, reason: str) -> ServerUnreachableError:
    return ServerUnreachableError(
        f"the API server {cluster.host} (context '{cluster.context}') did not answer: {reason}",
        reason=reason,
    )
