"""Issue 55: the packages are resolved on this computer before create. uv's answer decides: a
set found goes on, no set refuses with uv's reason, an index out of reach is "not checked"
(never a refusal). Real uv, offline, over a wheel folder made here."""

from __future__ import annotations

import subprocess
from typing import cast

import pytest

from tests.wheels import make_wheel
from tpuwizard.core.remote.package_check import Verdict, judged, resolve
from tpuwizard.sandbox.workers.image import find_uv
from tpuwizard.session.package_check import package_note, package_refusal

UNREACHABLE = (
    "error: Request failed after 3 retries\n  cause: Failed to fetch: "
    "http://127.0.0.1:9/simple/optax/\n  cause: client error (Connect)\n"
)
NOT_FOUND = (
    "error: No solution found when resolving dependencies\n  cause: Because flaxx was not found "
    "in the package registry and you require flaxx, we can conclude that your requirements are "
    "unsatisfiable.\n"
)


@pytest.mark.parametrize(
    ("code", "stderr", "verdict", "said"),
    [
        (0, "", Verdict.FITS, ""),
        (1, NOT_FOUND, Verdict.REFUSED, "Because flaxx was not found in the package registry"),
        (2, UNREACHABLE, Verdict.UNCHECKED, "the package index cannot be reached"),
        (2, "", Verdict.REFUSED, "uv exited 2"),
    ],
)
def test_uv_s_online_answer_decides(code, stderr, verdict, said):
    found = judged(subprocess.CompletedProcess(["uv"], code, "", stderr))
    assert found.verdict is verdict and said in found.why


@pytest.mark.parametrize(
    ("asked", "verdict", "said"),
    [
        (["tinypkg"], Verdict.FITS, ""),
        (["tinypkg==0.3.1", "needsjax"], Verdict.FITS, ""),
        (["tinypkg==9"], Verdict.REFUSED, "tinypkg==9"),
        (["no-such-pkg"], Verdict.REFUSED, "no-such-pkg"),
        (["needsnewjax"], Verdict.REFUSED, "jax>=99"),
    ],
)
def test_a_set_is_resolved_beside_the_pin(tmp_path, asked, verdict, said):
    wheels = tmp_path / "wheels"
    make_wheel(wheels, "jax", "1.0")
    make_wheel(wheels, "tinypkg", "0.3.1")
    make_wheel(wheels, "needsjax", "1.0", requires=("jax>=1",))
    make_wheel(wheels, "needsnewjax", "1.0", requires=("jax>=99",))
    uv = find_uv()
    assert uv is not None
    command = [uv, "pip", "compile", "--no-index", "--find-links", str(wheels), "--quiet",
               "--cache-dir", str(tmp_path / "cache")]  # fmt: skip
    found = resolve(lambda listed: [*command, listed], ["jax==1.0", *asked])
    assert found.verdict is verdict, found
    assert said in found.why


def test_the_words_name_the_packages_and_uv_s_reason():
    refused = judged(subprocess.CompletedProcess(["uv"], 1, "", NOT_FOUND))
    words = package_refusal(refused, ["flaxx"])
    assert words is not None and "(flaxx)" in words and "was not found" in words
    assert "Nothing was created" in words and package_note(refused, ["flaxx"]) is None
    unchecked = judged(subprocess.CompletedProcess(["uv"], 2, "", UNREACHABLE))
    note = package_note(unchecked, ["optax"])
    assert note is not None and "could not be checked before create" in note
    assert package_refusal(unchecked, ["optax"]) is None


def kept_node(settings: dict, practice: bool):
    """A kept node as ``run`` opens it, with only what the package check reads (its record and
    its session): no transport, so nothing can be copied to it."""
    from types import SimpleNamespace

    from tpuwizard.core.launch.records.ledger import Entry, Resource
    from tpuwizard.session.kept.nodes import KeptNode, KeptNodes

    r = Resource("node", "p", "us-central1-a", "node-a", "v5litepod-1", "r1")
    node = KeptNode.__new__(KeptNode)
    node.nodes = cast(KeptNodes, SimpleNamespace(session=SimpleNamespace(practice=practice)))
    node.entry = Entry(r, "kept", 1000.0, 900.0, {"settings": settings})
    node.name = "node-a"
    return node


@pytest.mark.parametrize(
    ("settings", "practice", "answer", "refused", "note"),
    [
        ({"jax": "0.4.38"}, True, (1, NOT_FOUND), "Nothing was copied to node-a", None),
        ({}, False, (2, UNREACHABLE), None, "could not be checked before the run"),
        ({"jax": "0.4.38"}, False, (0, ""), None, None),
    ],
)
def test_a_run_on_a_kept_node_checks_its_packages_beside_the_node_s_jax(
    monkeypatch, settings, practice, answer, refused, note
):
    """Issue 55: ``run --with`` resolves what it adds as a launch does (the same check, the
    same words), for the node's own JAX and world, before anything is copied."""
    from tpuwizard.core.errors import BadInput
    from tpuwizard.core.launch.plan.packages import PackageSpec
    from tpuwizard.session import package_check

    asked: list[tuple] = []

    def uv_answers(specs, jax, in_practice):
        asked.append((specs, jax, in_practice))
        return judged(subprocess.CompletedProcess(["uv"], answer[0], "", answer[1]))

    monkeypatch.setattr(package_check, "check_packages", uv_answers)
    node = kept_node(settings, practice)
    packages = (PackageSpec("flaxx", "--with"),)
    if refused:
        with pytest.raises(BadInput) as err:
            node.check_packages(packages)
        assert refused in str(err.value) and "(flaxx) cannot be installed" in str(err.value)
    else:
        said = node.check_packages(packages)
        assert said == note or (note is not None and said is not None and note in said)
    assert asked == [(["flaxx"], settings.get("jax"), practice)]
