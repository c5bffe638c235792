"""The one retry policy of every API call (`nvcregen.cluster.retry`), tested once here.

`check --server` (`dryrun.py`) and `collect` (`collect/client.py`) both send through
`send_retried`; their own tests check only what they make of its outcome. Here the
client's `ApiClient` is a scripted stand-in: each call returns the next answer (status,
headers) or raises the next connection error, and every wait is recorded.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from nvcregen.cluster.client import Cluster, ServerUnreachableError
from nvcregen.cluster.dryrun import DRY_RUN_POLICY
from nvcregen.cluster.retry import RetryPolicy, delay, send_retried

POLICY = RetryPolicy(attempts=4, backoff=0.5, max_backoff=1.5, max_retry_after=10.0)

Step = tuple[int, dict[str, str]] | Exception


@dataclass
class Response:
    """What `ApiClient.call_api` returns: a status, headers and a body to read."""

    status: int
    headers: dict[str, str]

    def read(self) -> bytes:
        return json.dumps({"kind": "Status", "code": self.status}).encode()


@dataclass
class ScriptedApi:
    """An `ApiClient` stand-in answering each call with the next scripted step."""

    steps: list[Step]
    calls: int = 0
    timeouts: list[Any] = field(default_factory=list)

    def param_serialize(self, **request: Any) -> tuple[Any, ...]:
        return (request["method"], request["resource_path"])

    def call_api(self, *_request: Any, _request_timeout: Any) -> Response:
        self.timeouts.append(_request_timeout)
        step = self.steps[min(self.calls, len(self.steps) - 1)]
        self.calls += 1
        if isinstance(step, Exception):
            raise step
        return Response(*step)


def cluster(*steps: Step) -> tuple[Cluster, ScriptedApi, list[float]]:
    api = ScriptedApi(list(steps))
    slept: list[float] = []
    return Cluster(api, "ctx", "https://api.example", sleep=slept.append), api, slept


def test_an_answer_that_is_not_retryable_comes_back_at_once() -> None:
    client, api, slept = cluster((404, {}))
    assert send_retried(client, POLICY, "GET", "/api/v1").status == 404
    assert (api.calls, slept) == (1, [])


def test_429_waits_as_long_as_retry_after_says() -> None:
    client, api, slept = cluster((429, {"Retry-After": "7"}), (200, {}))
    assert send_retried(client, POLICY, "GET", "/api/v1").status == 200
    assert (api.calls, slept) == (2, [7.0])


@pytest.mark.parametrize(
    ("header", "waited"),
    [
        ("3600", 10.0),
        ("-5", 0.0),
        ("Wed, 21 Oct 2015 07:28:00 GMT", 0.5),
        ("nan", 0.5),  # issue #14: time.sleep(nan) ended collect with "internal error"
        ("-nan", 0.5),
        ("inf", 10.0),
        ("1e999", 10.0),
    ],
)
def test_retry_after_is_capped_and_an_http_date_means_backoff(header: str, waited: float) -> None:
    client, _, slept = cluster((429, {"Retry-After": header}), (200, {}))
    send_retried(client, POLICY, "GET", "/api/v1")
    assert slept == [waited]


def test_5xx_and_no_answer_back_off_exponentially_up_to_the_cap() -> None:
    client, api, slept = cluster((500, {}), OSError("reset"), (503, {}), (200, {}))
    assert send_retried(client, POLICY, "GET", "/api/v1").status == 200
    assert api.calls == 4
    assert slept == [0.5, 1.0, 1.5]  # 0.5 doubled each time, capped at max_backoff


def test_giving_up_on_5xx_returns_the_last_answer() -> None:
    client, api, slept = cluster((502, {}))
    assert send_retried(client, POLICY, "GET", "/api/v1").status == 502
    assert (api.calls, len(slept)) == (POLICY.attempts, POLICY.attempts - 1)


def test_giving_up_without_an_answer_raises_with_the_reason() -> None:
    client, api, slept = cluster(OSError("connection refused"))
    with pytest.raises(ServerUnreachableError, match="did not answer: connection refused") as err:
        send_retried(client, POLICY, "GET", "/api/v1")
    assert err.value.reason == "connection refused"
    assert "https://api.example (context 'ctx')" in str(err.value)
    assert (api.calls, len(slept)) == (POLICY.attempts, POLICY.attempts - 1)


def test_every_attempt_uses_the_policys_timeout() -> None:
    client, api, _ = cluster((503, {}), (200, {}))
    send_retried(client, RetryPolicy(timeout=(1.0, 2.0)), "GET", "/api/v1")
    assert api.timeouts == [(1.0, 2.0), (1.0, 2.0)]


def test_the_dry_run_policy_is_three_tries_and_at_most_five_seconds() -> None:
    backoffs = [delay(None, attempt, DRY_RUN_POLICY) for attempt in (1, 2)]
    assert (DRY_RUN_POLICY.attempts, backoffs) == (3, [0.25, 0.5])
    client, _, slept = cluster((429, {"Retry-After": "60"}), (200, {}))
    send_retried(client, DRY_RUN_POLICY, "GET", "/api/v1")
    assert slept == [5.0]
