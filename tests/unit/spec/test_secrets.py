"""Secrets never reach out/: refused in the site at the field's line (issue #14, item 7).

NVC113 is a password in a URL, NVC114 recognisable secret material; both name what was
found, never the secret, and text output masks the value. `check` finds the same in a
generated tree (NVC669, `tests/unit/check/test_check_hostile.py`).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from nvcregen.check.policy import secret_strings
from nvcregen.cli import main
from nvcregen.commands.diagnostics import JsonRenderer, TextRenderer
from nvcregen.core.errors import Diagnostic, Severity, Span
from nvcregen.core.secrets import (
    URL_CREDENTIALS,
    URL_TOKEN_USER,
    find_secret,
    might_hold_secret,
    redact,
)
from nvcregen.spec.load import load_document

ROOT = Path(__file__).resolve().parents[3]
SITE = (ROOT / "sites" / "h20-3e-lab.yaml").read_text()
REPO = "https://git.example.com/gpu/readiness.git"
GITHUB = "ghp_" + "a1B2" * 9
PEM = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXktdjEAAAA=\\n"
    "-----END OPENSSH PRIVATE KEY-----"
)
KUBECONFIG = "apiVersion: v1\\nkind: Config\\nusers:\\n- name: admin\\n  user: {token: x}"
AZURE_PAT = "k3x7qm2z5vbn4p6wr7ty2ua3sd4fg5hj6kl7zx2cv3bn4mq5we6r"  # 52 of [a-z2-7]
CLASSIC = "3f1c9e0b7a5d4c2e8f6a1b0c9d8e7f6a5b4c3d2e"  # 40 hex digits
URL_USER = URL_TOKEN_USER
SECRETS = {
    "a URL password": ("https://bot:hunter22@git.example.com/gpu/r.git", URL_CREDENTIALS),
    "a GitHub token": (GITHUB, "a GitHub token"),
    "a fine-grained GitHub token": ("github_pat_" + "A" * 30, "a GitHub token"),
    "an AWS key id": ("AKIAIOSFODNN7EXAMPLE", "an AWS access key id"),
    "a Slack token": ("xoxb-1234567890-abcdefghij", "a Slack token"),
    "a JWT": (
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXBhcnQ",
        "a JSON Web Token",
    ),
    "a bearer token": ("Bearer abcdefghijklmnopqrstuvwxyz012345", "a bearer token"),
    "a PEM key": (PEM.replace("\\n", "\n"), "a private key"),
    "a kubeconfig": (KUBECONFIG.replace("\\n", "\n"), "kubeconfig credentials"),
    "kubeconfig key data": ("client-key-data: LS0tLS1CRUdJTg==", "kubeconfig credentials"),
    # issue #32: a token as a Git URL's user name, with no password
    "an Azure DevOps PAT as a URL user": (
        f"https://{AZURE_PAT}@dev.azure.com/o/p/_git/r",
        URL_USER,
    ),
    "a classic GitHub token as a URL user": (f"https://{CLASSIC}@github.com/o/r.git", URL_USER),
    "a token as an ssh URL user": (f"ssh://{CLASSIC}@git.example.com/o/r.git", URL_USER),
    "a token as an scp-style user": (f"{AZURE_PAT}@git.example.com:o/r.git", URL_USER),
}
CLEAN = [
    REPO,
    "ssh://git@github.com/org/repo.git",
    "git@github.com:org/repo.git",
    "oci://ghcr.io/nvidia/cluster-readiness-engine",
    "nvcr.io/nvidia/pytorch:26.01-py3@sha256:" + "4c" * 32,
    "http://[::1]:8080/path?x=1",
    "Bearer",
    "token-secret-name",
    "https://x-access-token@github.com/org/repo.git",  # user names people choose
    "https://oauth2@gitlab.example.com/org/repo.git",
    "ssh://readiness-deploy-bot-for-l20-prod@git.example.com/r.git",  # long, no digit
    "nvidia/k8s-device-plugin-with-a-long-name-2024@sha256:" + "4c" * 32,
]


@pytest.mark.parametrize(("text", "what"), SECRETS.values(), ids=SECRETS.keys())
def test_each_kind_of_secret_is_named(text: str, what: str) -> None:
    assert find_secret(text) == what
    assert find_secret(f"prefix {text} suffix") == what
    # the quick scan (clues first, then the pattern) finds what the full one does
    assert might_hold_secret(f"prefix {text} suffix")
    # and in a generated object, multi-line values included (NVC669)
    assert [f.pointer for f in secret_strings({"a": [f"x {text}"]})] == ["/a/0"]


@pytest.mark.parametrize("text", CLEAN)
def test_ordinary_configuration_is_no_secret(text: str) -> None:
    assert find_secret(text) is None
    assert redact(text) == text


@pytest.mark.parametrize(("text", "what"), SECRETS.values(), ids=SECRETS.keys())
def test_redact_masks_every_kind_of_secret(text: str, what: str) -> None:
    masked = redact(f"before {text} after")
    assert text not in masked and "hunter22" not in masked
    assert what == URL_CREDENTIALS or find_secret(masked) is None
    assert masked.startswith("before ") and masked.endswith(" after")


def test_redact_keeps_a_url_user_and_host() -> None:
    url = "https://bot:hun:ter22@git.example.com/r.git"
    assert redact(f"repo {url}") == "repo https://bot:***@git.example.com/r.git"


def test_redact_keeps_the_host_of_a_url_whose_user_is_a_token() -> None:
    url = f"https://{AZURE_PAT}@dev.azure.com/o/p/_git/r"
    assert redact(f"repo {url}") == "repo https://***@dev.azure.com/o/p/_git/r"


def test_a_token_as_the_repo_url_user_is_refused_at_its_line() -> None:
    """Issue #32: `https://<PAT>@dev.azure.com/...` passed NVC113 (no password) into out/."""
    for url in (
        f"https://{AZURE_PAT}@dev.azure.com/o/p/_git/r",
        f"https://{CLASSIC}@github.com/o/r",
    ):
        doc, diags = load_document(with_repo(url), "s.yaml")
        assert doc is None
        [diag] = diags
        line = next(n for n, text in enumerate(SITE.splitlines(), 1) if REPO in text)
        assert (diag.code, diag.span.line, diag.path) == ("NVC114", line, "/spec/gitops/repoURL")
        assert "a token as the user name of a URL" in diag.message
        assert AZURE_PAT not in diag.message + diag.hint and CLASSIC not in diag.message


def test_messages_hints_and_notes_never_print_a_secret(tmp_path: Path) -> None:
    """A diagnostic that quotes a value (NVC680 names the repoURL) prints it masked."""
    url = "https://bot:hunter22@git.example.com/r.git"
    (tmp_path / "f.yaml").write_text(f"repoURL: {url}\n")
    diag = Diagnostic(
        Span("f.yaml", 1, 10),
        Severity.ERROR,
        "NVC680",
        f"no repo {url}",
        "/x",
        f"allow {url}",
        (f"seen {url}",),
    )
    for printed in (TextRenderer(tmp_path).render([diag]), JsonRenderer().render([diag])):
        assert "hunter22" not in printed
        assert "https://bot:***@git.example.com/r.git" in printed


def with_repo(url: str) -> bytes:
    return SITE.replace(REPO, url).encode()


def test_a_password_in_the_repo_url_is_refused_at_its_line() -> None:
    doc, diags = load_document(with_repo("https://bot:hunter22@git.example.com/r.git"), "s.yaml")
    assert doc is None
    [diag] = diags
    line = next(n for n, text in enumerate(SITE.splitlines(), 1) if REPO in text)
    assert (diag.code, diag.span.line, diag.path) == ("NVC113", line, "/spec/gitops/repoURL")
    assert "hunter22" not in diag.message + diag.hint


def test_secret_material_in_any_string_or_key_is_refused() -> None:
    text = SITE.replace("  cluster: h20-3e-lab", f'  cluster: "{GITHUB}"', 1)
    text = text.replace("nodePools:", f'nodePools:\n    # "{PEM}"', 1)  # a comment is fine
    text = text.replace("metadata:", f'metadata:\n  labels: {{"{GITHUB}": x}}', 1)
    doc, diags = load_document(text.encode(), "s.yaml")
    assert doc is None
    assert sorted((d.code, d.path) for d in diags) == [
        ("NVC114", "/metadata/labels/" + GITHUB),
        ("NVC114", "/spec/cluster"),
    ]


def test_text_output_masks_the_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    site = tmp_path / "s.yaml"
    site.write_bytes(with_repo("https://bot:hunter22@git.example.com/r.git"))
    done = CliRunner().invoke(main, ["validate", str(site)])
    assert done.exit_code == 2
    assert "error[NVC113]" in done.stderr
    assert "hunter22" not in done.output + done.stderr
    assert re.search(r"repoURL: \*{20,}", done.stderr)


TOKENS = st.sampled_from([text for text, _ in SECRETS.values() if "\n" not in text])
FIELDS = st.sampled_from(["  cluster: h20-3e-lab", "    trigger: manual"])


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(
    token=TOKENS,
    field=FIELDS,
    before=st.text("abc -_/.", max_size=8),
    after=st.text("abc -_/.", max_size=8),
)
def test_a_secret_anywhere_in_any_string_is_always_refused(
    token: str, field: str, before: str, after: str
) -> None:
    """Property: wrapped in any text, in any string field, a secret never loads."""
    key = field.split(":", maxsplit=1)[0]
    value = f"{before} {token} {after}".replace('"', "")
    doc, diags = load_document(SITE.replace(field, f'{key}: "{value}"', 1).encode(), "s.yaml")
    assert doc is None
    assert {d.code for d in diags} <= {"NVC113", "NVC114"} and diags


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="ascii"), max_size=200))
def test_the_quick_scan_agrees_with_every_pattern_on_any_text(text: str) -> None:
    """Clues only skip a pattern that cannot match: never a secret the patterns find."""
    for token in ("", *(t for t, _ in SECRETS.values())):
        sample = text[: len(text) // 2] + token + text[len(text) // 2 :]
        assert might_hold_secret(sample) == (find_secret(sample) is not None)


def test_a_secret_in_a_key_never_reaches_the_printed_pointer(tmp_path: Path) -> None:
    url = "https://bob:hunter2pass@x.example.com/y"
    found = secret_strings({"metadata": {"annotations": {url: "x"}}})
    assert [(f.pointer, f.message.split(" holds")[0]) for f in found] == [
        ("/metadata/annotations", "a key of this mapping")
    ]
    (tmp_path / "f.yaml").write_text("a: 1\n")
    pointer = "/spec/labels/https:~1~1bob:hunter2pass@x.example.com~1y"
    diag = Diagnostic(Span("f.yaml", 1, 1), Severity.ERROR, "NVC113", "m", pointer, "h")
    for printed in (TextRenderer(tmp_path).render([diag]), JsonRenderer().render([diag])):
        assert "hunter2pass" not in printed
        assert "/spec/labels/***" in printed


@pytest.mark.parametrize(
    "value",
    [
        "kind:\tConfig\nusers: [x]",
        "Bearer\t" + "a" * 32,
        "x\r\nkind: Config\r\nusers:",
        "Bearer\x1c" + "a" * 32,  # JSON writes it \\u001c; the pattern's \\s matches it
    ],
)
def test_secrets_behind_escaped_whitespace_are_found_in_objects(value: str) -> None:
    assert [f.pointer for f in secret_strings({"data": {"v": value}})] == ["/data/v"]
