"""Perform `collect`'s LIST and DELETE calls with the official kubernetes client.

This module only sends what `collect/requests.py` decided. The client comes from
`nvcregen.cluster.connect` (the optional `cluster` extra, imported lazily there), and
requests go through its `ApiClient` as plain HTTP, so each answer's status and
`Retry-After` header are seen as the server sent them.

- Every call is retried by `nvcregen.cluster.retry` with the collection's `RetryPolicy`
  (429, 5xx, connection errors and timeouts); one that still fails raises `ApiCallError`.
- A LIST is paginated with `limit` and `continue`. When the server answers 410 Gone to a
  continue token (it expired, so the rest of the list is no longer consistent with the
  first pages), the listing starts over from the first page, a bounded number of times.
- A listing that cannot be completed raises `ApiCallError`: a caller never sees a part
  of a list, so a partial read can never be archived as complete. A list the server cut
  short (more items announced by `remainingItemCount` than arrive, a page announcing
  more without a continue token, a repeated token) is such a listing.
- A 404 to a LIST means "this kind is not served" only when API discovery agrees (the
  group/version is unknown, or its resource list lacks the kind); otherwise the 404 is a
  failed read, never an empty one.
- Every item's kind, namespace and name must be valid Kubernetes names
  (`core/kube.py::name_problem`): they become paths in the archive.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NoReturn

from nvcregen.cluster.client import Answer, Cluster, ServerUnreachableError
from nvcregen.cluster.retry import RETRYABLE, RetryPolicy, send_retried
from nvcregen.collect.requests import DeleteRequest, ListRequest
from nvcregen.core.kube import name_problem
from nvcregen.results.liveobjects import ListRecord, Obj, key_of

MAX_PAGES = 10_000  # a server that keeps handing out continue tokens is broken
RBAC_HINT = (
    "; reading needs the read-only RBAC of the platform layer (ServiceAccount, ClusterRole "
    "and Role `nvcregen-collector`)"
)

PageHook = Callable[[ListRequest, int], None]


class ApiCallError(Exception):
    """A call failed for good: refused, or still failing after every retry."""


@dataclass(frozen=True)
class Listing:
    """Every item of one complete listing, and how it was read."""

    items: list[Obj]
    record: ListRecord


def unserved(listings: Iterable[Listing]) -> list[str]:
    """A note for each listing of a kind the cluster does not serve."""
    return [
        f"the cluster serves no {listing.record.kind} (its CRD is not installed)"
        for listing in listings
        if not listing.record.served
    ]


DeleteStatus = Literal["deleted", "gone", "conflict", "refused", "kept"]


@dataclass(frozen=True)
class DeleteOutcome:
    """What the server did with one DELETE."""

    request: DeleteRequest
    status: DeleteStatus
    code: int
    message: str = ""


class _ExpiredError(Exception):
    """The continue token of a listing expired (410 Gone)."""


def list_objects(
    cluster: Cluster, request: ListRequest, policy: RetryPolicy, on_page: PageHook | None = None
) -> Listing:
    """Read every page of one listing.

    Args:
        cluster: A client from `nvcregen.cluster.connect`.
        request: What to list.
        policy: Retries, timeouts and restarts.
        on_page: Called after each page with the number of items read so far.

    Returns:
        Every item, consistent with one resourceVersion. A kind the server does not
        serve (404) gives no items and a record with `served=False`.

    Raises:
        ApiCallError: When a page cannot be read after every retry, the server refuses
            the listing, or its continue token expires more than `policy.restarts` times.

    """
    for restart in range(policy.restarts + 1):
        try:
            return _list_once(cluster, request, policy, restart, on_page)
        except _ExpiredError:
            continue
    raise ApiCallError(
        f"listing {request}: the continue token expired {policy.restarts + 1} times "
        "(410 Gone); the list changes faster than it can be read"
    )


def _list_once(
    cluster: Cluster,
    request: ListRequest,
    policy: RetryPolicy,
    restarts: int,
    on_page: PageHook | None,
) -> Listing:
    pages = _Pages(request)
    while pages.count < MAX_PAGES:
        token = pages.token
        answer = _call(cluster, policy, "GET", request.path(), request.query(token))
        if answer.status == 410 and token:
            raise _ExpiredError
        if answer.status == 404 and not token and not _served(cluster, request, policy):
            record = ListRecord(
                request.kind, request.namespace, request.label_selector, "", 0, 0, 0, served=False
            )
            return Listing([], record)
        if answer.status != 200 or not isinstance(answer.body, dict):
            hint = RBAC_HINT if answer.status == 403 else ""
            raise ApiCallError(f"listing {request}: {_failure(answer)}{hint}")
        pages.add(answer.body)
        if on_page is not None:
            on_page(request, len(pages.items))
        if not pages.token:
            return pages.listing(restarts)
    raise ApiCallError(f"listing {request}: more than {MAX_PAGES} pages")


class _Pages:
    """The pages of one listing so far, checked for a list the server cut short.

    A page that announces more items (`remainingItemCount`) must carry a continue token;
    a continue token must never repeat; and when the first page said how many items the
    list holds (the server says so for a list without a label selector, consistent at
    one resourceVersion), exactly that many must arrive.
    """

    def __init__(self, request: ListRequest) -> None:
        self.request = request
        self.items: list[Obj] = []
        self.token = ""
        self.version = ""
        self.count = 0
        self.expected: int | None = None
        self.tokens: set[str] = set()

    def add(self, body: dict[str, Any]) -> None:
        """Take one page; raise ApiCallError when it shows the list is incomplete."""
        self.items += _items(body, self.request)
        meta = body.get("metadata")
        if not isinstance(meta, dict):  # where a continue token would be: not to be guessed
            self._cut("the answer has no list metadata")
        token = meta.get("continue")
        if token is not None and not isinstance(token, str):
            self._cut(f"the continue token is not a string: {token!r}"[:200])
        self.version = self.version or str(meta.get("resourceVersion") or "")
        self.token, self.count = token or "", self.count + 1
        announced = meta.get("remainingItemCount")
        remaining = announced if type(announced) is int else None  # bool is no count
        if remaining and remaining > 0 and not self.token:
            self._cut(f"the server announced {remaining} more items but sent no continue token")
        if self.token in self.tokens:
            self._cut("the server sent the same continue token twice")
        self.tokens.add(self.token)
        if remaining is not None and self.count == 1:
            self.expected = len(self.items) + max(remaining, 0)
        if not self.token and self.expected is not None and len(self.items) != self.expected:
            self._cut(f"{len(self.items)} items arrived of the {self.expected} announced")

    def _cut(self, why: str) -> NoReturn:
        raise ApiCallError(f"listing {self.request}: the list is incomplete: {why}")

    def listing(self, restarts: int) -> Listing:
        """The complete listing and its record."""
        request = self.request
        record = ListRecord(
            request.kind,
            request.namespace,
            request.label_selector,
            self.version,
            len(self.items),
            self.count,
            restarts,
        )
        return Listing(self.items, record)


def _served(cluster: Cluster, request: ListRequest, policy: RetryPolicy) -> bool:
    """Whether API discovery lists the kind's resource (after its LIST answered 404).

    A group/version discovery does not know (404), or whose resource list lacks the
    plural, is a CRD that is not installed. A 404 for a resource discovery does list is
    no answer to trust: the read is incomplete.

    Raises:
        ApiCallError: When discovery fails, or lists the resource the LIST could not find.

    """
    api = request.api_version
    path = f"/apis/{api}" if "/" in api else f"/api/{api}"
    answer = _call(cluster, policy, "GET", path, ())
    if answer.status == 404:
        return False
    body = answer.body if isinstance(answer.body, dict) else {}
    if answer.status != 200 or not isinstance(body.get("resources"), list):
        raise ApiCallError(f"discovery of {api}: {_failure(answer)}")
    names = {r.get("name") for r in body["resources"] if isinstance(r, dict)}
    if request.plural in names:
        raise ApiCallError(
            f"listing {request}: HTTP 404 although discovery lists {request.plural} in {api};"
            " the list could not be read"
        )
    return False


def _items(body: dict[str, Any], request: ListRequest) -> list[Obj]:
    """A page's items, with the apiVersion and kind that list items may leave out."""
    items = body.get("items")
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise ApiCallError(f"listing {request}: the answer has no list of items")
    defaults = {"apiVersion": request.api_version, "kind": request.kind}
    found = [
        item if {"apiVersion", "kind"} <= item.keys() else {**defaults, **item} for item in items
    ]
    for item in found:
        meta = item.get("metadata")
        if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
            raise ApiCallError(f"listing {request}: an item has no metadata.name")
        key = key_of(item)
        problem = name_problem(key.kind, key.namespace, key.name)
        if problem is not None:  # never let an answer name a path outside the archive
            raise ApiCallError(f"listing {request}: the server sent an unusable object: {problem}")
    return found


def delete_object(cluster: Cluster, request: DeleteRequest, policy: RetryPolicy) -> DeleteOutcome:
    """Delete one object if it is still the archived version (uid and resourceVersion).

    Returns:
        `deleted` (200/202), `gone` (404: nothing to delete), `conflict` (409: it
        changed since it was archived, so it was kept) or `refused` (anything else,
        including a call that failed after every retry).

    """
    try:
        answer = _call(cluster, policy, "DELETE", request.path(), (), request.body())
    except ApiCallError as exc:
        return DeleteOutcome(request, "refused", 0, str(exc))
    if answer.status in {200, 202}:
        return DeleteOutcome(request, "deleted", answer.status)
    status: DeleteStatus = {404: "gone", 409: "conflict"}.get(answer.status, "refused")  # type: ignore[assignment]
    return DeleteOutcome(request, status, answer.status, _failure(answer))


def read_text(
    cluster: Cluster, path: str, query: Sequence[tuple[str, str]], policy: RetryPolicy
) -> bytes | None:
    """GET a plain-text subresource (a pod's log) with the same retries as a LIST.

    Returns:
        The body byte for byte; None when the server answers 404 (the pod is gone).

    Raises:
        ApiCallError: When the server refuses, or still fails after every retry.

    """
    answer = _call(cluster, policy, "GET", path, query, accept="*/*")
    if answer.status == 404:
        return None
    if answer.status != 200:
        hint = RBAC_HINT if answer.status == 403 else ""
        raise ApiCallError(f"GET {path}: {_failure(answer)}{hint}")
    return answer.raw


def _call(
    cluster: Cluster,
    policy: RetryPolicy,
    method: str,
    path: str,
    query: Sequence[tuple[str, str]],
    body: dict[str, Any] | None = None,
    accept: str = "application/json",
) -> Answer:
    """Send one request with `policy`'s retries; a call that still fails is an ApiCallError."""
    try:
        answer = send_retried(cluster, policy, method, path, query, body, accept=accept)
    except ServerUnreachableError as exc:
        problem = f"no answer ({exc.reason})"
    else:
        if answer.status not in RETRYABLE:
            return answer
        problem = _failure(answer)
    raise ApiCallError(
        f"{method} {path} on {cluster.host} (context '{cluster.context}') failed "
        f"{policy.attempts} times; last: {problem}"
    )


def _failure(answer: Answer) -> str:
    """HTTP status and the `Status` message of a refusal."""
    body = answer.body
    message = ""
    if isinstance(body, dict):
        message = str(body.get("message") or body.get("reason") or "")
    elif body:
        message = str(body)
    return f"HTTP {answer.status}" + (f": {message}" if message else "")
