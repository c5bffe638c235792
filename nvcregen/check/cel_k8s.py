"""The Kubernetes CEL library, for the offline CEL engine: quantities, URLs, lists, regex, sets.

The API server adds these functions to CEL for CRD validation rules (k8s.io/apiserver
`pkg/cel/library`). The engine's own extensions already give the string functions
(`split`, `lowerAscii`, `join`, ...) and optional values; this module adds the rest, with
the same names, receivers and error behaviour:

- `isQuantity(string)`, `quantity(string)` and, on a quantity, `compareTo`,
  `isGreaterThan`, `isLessThan`, `add`, `sub` (quantity or int), `asInteger`, `isInteger`,
  `asApproximateFloat`, `sign`;
- `isURL(string)`, `url(string)` and, on a URL, `getScheme`, `getHost`, `getHostname`,
  `getPort`, `getEscapedPath`, `getQuery`;
- on a list: `isSorted`, `sum`, `min`, `max` (not `indexOf`/`lastIndexOf`: the strings
  extension owns those names, so a list receiver gets no overload and the rule is
  reported unchecked);
- on a string: `find`, `findAll` (Python `re`, close to RE2 for the patterns CRDs use);
- `sets.contains`, `sets.equivalent`, `sets.intersects`.

The engine's Python binding cannot hold opaque values, so a quantity is the map
`{"kubernetes.Quantity": "<exact value as a fraction>"}` and a URL the map
`{"kubernetes.URL": "<text>"}`. Equal quantities ("1Gi" and "1073741824") are equal maps,
as `==` on quantities compares values in Kubernetes too. `format.*`, IP/CIDR and semver
functions are absent: no vendored rule uses them, and a rule that does is unchecked.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from itertools import pairwise
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

from cel_expr_python import cel  # type: ignore[import-untyped]

from nvcregen.core.quantity import INT64_MAX, is_quantity, parse_quantity

__all__ = ["declarations", "parse_quantity"]

QUANTITY_KEY = "kubernetes.Quantity"
URL_KEY = "kubernetes.URL"


def _quantity(value: Fraction) -> dict[str, str]:
    return {QUANTITY_KEY: str(value)}


def _value(quantity: Mapping[str, Any]) -> Fraction:
    if set(quantity) != {QUANTITY_KEY}:
        raise TypeError("not a quantity (make one with quantity(string))")
    return _fraction(str(quantity[QUANTITY_KEY]))


@functools.lru_cache(maxsize=4096)
def _fraction(text: str) -> Fraction:
    return Fraction(text)


def _compare(a: Mapping[str, Any], b: Mapping[str, Any]) -> int:
    x, y = _value(a), _value(b)
    return (x > y) - (x < y)


def _as_integer(quantity: Mapping[str, Any]) -> int:
    value = _value(quantity)
    if value.denominator != 1 or not -(2**63) <= value <= INT64_MAX:
        raise ValueError("cannot convert value to integer")
    return int(value)


def _is_integer(quantity: Mapping[str, Any]) -> bool:
    value = _value(quantity)
    return value.denominator == 1 and -(2**63) <= value <= INT64_MAX


def _sign(quantity: Mapping[str, Any]) -> int:
    value = _value(quantity)
    return (value > 0) - (value < 0)


def _add(a: Mapping[str, Any], b: Mapping[str, Any] | int) -> dict[str, str]:
    other = Fraction(b) if isinstance(b, int) else _value(b)
    return _quantity(_value(a) + other)


def _sub(a: Mapping[str, Any], b: Mapping[str, Any] | int) -> dict[str, str]:
    other = Fraction(b) if isinstance(b, int) else _value(b)
    return _quantity(_value(a) - other)


# URLs: `url()` accepts what Go's url.ParseRequestURI accepts: an absolute URI or an
# absolute path. Host, hostname and port follow Go's url.URL accessors.

_URL_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")
_VALID_ENCODED = re.compile(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@\[\]/]|%[0-9A-Fa-f]{2})*")


def _check_url(text: str) -> None:
    if not text or any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        raise ValueError(f"URL parse error during conversion from string: {text!r}")
    scheme, colon, rest = text.partition(":")
    absolute = bool(colon) and _URL_SCHEME.fullmatch(scheme) is not None
    if not absolute and not text.startswith("/"):
        raise ValueError(f"URL parse error during conversion from string: {text!r} is not absolute")
    if absolute and not rest:
        raise ValueError(f"URL parse error during conversion from string: {text!r} is empty")


def _url(text: str) -> dict[str, str]:
    _check_url(text)
    return {URL_KEY: text}


def _is_url(text: str) -> bool:
    try:
        _check_url(text)
    except ValueError:
        return False
    return True


def _text(url: Mapping[str, Any]) -> str:
    if set(url) != {URL_KEY}:
        raise TypeError("not a URL (make one with url(string))")
    return str(url[URL_KEY])


def _host(url: Mapping[str, Any]) -> str:
    return urlsplit(_text(url)).netloc.rpartition("@")[2]


def _split_host_port(host: str) -> tuple[str, str]:
    colon = host.rfind(":")
    port = ""
    if colon != -1 and host[colon + 1 :].isdigit():
        host, port = host[:colon], host[colon + 1 :]
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, port


def _escaped_path(url: Mapping[str, Any]) -> str:
    path = urlsplit(_text(url)).path
    if _VALID_ENCODED.fullmatch(path):
        return path
    return quote(unquote(path), safe="/$&+,:;=@")


def _query(url: Mapping[str, Any]) -> dict[str, list[str]]:
    return parse_qs(urlsplit(_text(url)).query, keep_blank_values=True)


# Lists, regular expressions and sets.


def _is_sorted(items: Sequence[Any]) -> bool:
    return all(a <= b for a, b in pairwise(items))


def _sum(items: Sequence[Any]) -> Any:
    return sum(items[1:], items[0]) if items else 0


def _min(items: Sequence[Any]) -> Any:
    if not items:
        raise ValueError("min called on empty list")
    return min(items)


def _max(items: Sequence[Any]) -> Any:
    if not items:
        raise ValueError("max called on empty list")
    return max(items)


def _find(text: str, pattern: str) -> str:
    found = re.search(pattern, text)
    return found[0] if found else ""


def _find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    matches = [m[0] for m in re.finditer(pattern, text)]
    return matches if limit < 0 else matches[:limit]


def _contains(items: Sequence[Any], others: Sequence[Any]) -> bool:
    return all(item in items for item in others)


def _equivalent(items: Sequence[Any], others: Sequence[Any]) -> bool:
    return _contains(items, others) and _contains(others, items)


def _intersects(items: Sequence[Any], others: Sequence[Any]) -> bool:
    return any(item in items for item in others)


# Declarations.

_T = cel.Type
_QUANTITY_TYPE = _T.Map(_T.STRING, _T.STRING)
_URL_TYPE = _T.Map(_T.STRING, _T.STRING)
_LIST = _T.List(_T.DYN)


def _overload(
    name: str, result: Any, params: list[Any], impl: Callable[..., Any], *, member: bool
) -> Any:
    kinds = "_".join(str(p.name()) for p in params)
    oid = re.sub(r"\W+", "_", f"nvcregen_{name}_{kinds}".lower())
    return cel.Overload(oid, result, params, is_member=member, impl=impl)


def _member(name: str, result: Any, params: list[Any], impl: Callable[..., Any]) -> Any:
    return cel.FunctionDecl(name, [_overload(name, result, params, impl, member=True)])


def _global(name: str, result: Any, params: list[Any], impl: Callable[..., Any]) -> Any:
    return cel.FunctionDecl(name, [_overload(name, result, params, impl, member=False)])


def _quantity_declarations() -> list[Any]:
    q, s = _QUANTITY_TYPE, _T.STRING
    arith = [
        cel.FunctionDecl(
            name,
            [
                _overload(name, q, [q, q], impl, member=True),
                _overload(name, q, [q, _T.INT], impl, member=True),
            ],
        )
        for name, impl in (("add", _add), ("sub", _sub))
    ]
    return [
        _global("isQuantity", _T.BOOL, [s], is_quantity),
        _global("quantity", q, [s], lambda text: _quantity(parse_quantity(text))),
        _member("compareTo", _T.INT, [q, q], _compare),
        _member("isGreaterThan", _T.BOOL, [q, q], lambda a, b: _compare(a, b) > 0),
        _member("isLessThan", _T.BOOL, [q, q], lambda a, b: _compare(a, b) < 0),
        _member("asInteger", _T.INT, [q], _as_integer),
        _member("isInteger", _T.BOOL, [q], _is_integer),
        _member("asApproximateFloat", _T.DOUBLE, [q], lambda a: float(_value(a))),
        _member("sign", _T.INT, [q], _sign),
        *arith,
    ]


def _url_declarations() -> list[Any]:
    u, s = _URL_TYPE, _T.STRING
    return [
        _global("isURL", _T.BOOL, [s], _is_url),
        _global("url", u, [s], _url),
        _member("getScheme", s, [u], lambda url: urlsplit(_text(url)).scheme),
        _member("getHost", s, [u], _host),
        _member("getHostname", s, [u], lambda url: _split_host_port(_host(url))[0]),
        _member("getPort", s, [u], lambda url: _split_host_port(_host(url))[1]),
        _member("getEscapedPath", s, [u], _escaped_path),
        _member("getQuery", _T.Map(s, _T.List(s)), [u], _query),
    ]


def _other_declarations() -> list[Any]:
    s, dyn = _T.STRING, _T.DYN
    find_all = [
        _overload("findAll", _T.List(s), [s, s], _find_all, member=True),
        _overload("findAll", _T.List(s), [s, s, _T.INT], _find_all, member=True),
    ]
    return [
        _member("isSorted", _T.BOOL, [_LIST], _is_sorted),
        _member("sum", dyn, [_LIST], _sum),
        _member("min", dyn, [_LIST], _min),
        _member("max", dyn, [_LIST], _max),
        _member("find", s, [s, s], _find),
        cel.FunctionDecl("findAll", find_all),
        _global("sets.contains", _T.BOOL, [_LIST, _LIST], _contains),
        _global("sets.equivalent", _T.BOOL, [_LIST, _LIST], _equivalent),
        _global("sets.intersects", _T.BOOL, [_LIST, _LIST], _intersects),
    ]


def declarations() -> list[Any]:
    """Return the engine's declarations (with implementations) of the Kubernetes library.

    Returns:
        `cel.FunctionDecl` objects, for `cel.NewEnv(functions=...)`.

    """
    return [*_quantity_declarations(), *_url_declarations(), *_other_declarations()]
