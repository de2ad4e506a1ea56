"""Hostile values in every option of ``tpuwizard export`` (issue 48, F4): each value reaches
its file as one scalar or one quoted shell word and reads back unchanged, or the export is
refused with exit 2 and nothing written. The files are read back with a YAML parser (exactly one
document, exactly the keys the target writes), the shell files with bash -n and shlex, and the
``--json`` document with json."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from tests.unit.test_handover import CRD
from tpuwizard.cli import main
from tpuwizard.core.export_marks import JOB_FILENAME
from tpuwizard.core.handover.yaml_text import comment, dump

HOSTILE = {
    "newline": "x\ny",
    "pod": "ghcr.io/me/img:1\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: injected-pod\n"
    "spec:\n  containers:\n  - name: c\n    image: attacker/miner\n---\n#",
    "document": "---",
    "mapping": "kind: Pod",
    "comment": "# c",
    "quotes": "a'b\"c",
    "subshell": "$(touch pwned)",
    "backticks": "`touch pwned`",
    "line-separator": "a\u2028kind: Pod",
    "paragraph-separator": "a\u2029kind: Pod",
    "next-line": "a\x85kind: Pod",
    "carriage-return": "a\rkind: Pod",
    "terminal-escape": "\x1b]0;owned\x07",
    "not-utf8": "e\udc9bf",  # a byte the terminal's encoding could not decode
    # (no NUL: a command line cannot hold one, each argument ends at it)
    "yaml-tags": "&a *a !!python/object/apply:os.system ['touch pwned']",
    "flow": "{kind: Pod}",
    "long": "x" * 5000,
    "unicode": "données-中文",
    "blank": "",
}
TARGETS = ("xpk", "jobset", "skypilot")
# Valid image references of odd shapes: each must reach the JobSet unchanged.
IMAGES = (
    "localhost:5000/team/train:v1",
    "Registry.Example.com:443/a__b/c---d.e:TAG_1.0-rc",
    "img@sha256:" + "0a" * 32,
    "[::1]:5000/x/y:z",
)
# The keys each YAML target's one document has.
# Each target's text in the export's folder (issue 55.9), for the workload tpuwizard-run.
TEXT_FILES = {
    "xpk": "tpuwizard-run-xpk.sh",
    "jobset": "tpuwizard-run.jobset.yaml",
    "skypilot": "tpuwizard-run.sky.yaml",
}
KEYS = {
    "jobset": {"apiVersion", "kind", "metadata", "spec"},
    "skypilot": {"name", "resources", "workdir", "run"},
}


@pytest.fixture(scope="module")
def jobset_schema() -> jsonschema.Draft7Validator:
    crd = yaml.load(CRD.read_text("utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha2"]
    return jsonschema.Draft7Validator(version["schema"]["openAPIV3Schema"])


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _run(folder: Path, target: str, option: str | None, value: str) -> tuple[list[str], object]:
    """Export into ``folder``/plan.out (or --out ``value``) with ``option`` set to ``value``
    (None: as a script argument); the arguments given and click's result."""
    out = "plan.out"
    args = ["export", "--to", target, "--accelerator", "v5litepod-16", "--json"]
    script = "train.py"
    after: list[str] = []
    if option == "--script":
        script = value
        # A name no file can have (too long): the export must say there is no such file.
        with contextlib.suppress(OSError, ValueError):
            (folder / value).write_text("print('hi')\n")
    elif option == "--requirements":
        (folder / "hostile-req.txt").write_text(f"{value}\n", "utf-8", "surrogateescape")
        args += ["--requirements", "hostile-req.txt"]
    elif option == "--out":
        out = value
    elif option is None:
        after = ["--", value]
    else:
        args += [option, value]
    args += ["--script", script, "--out", out, *after]
    return args, CliRunner().invoke(main, args)


def _one_document(text: str, target: str) -> dict:
    """The file's YAML: exactly one document, exactly the target's keys, comments above it."""
    documents = [d for d in yaml.safe_load_all(text) if d is not None]
    assert len(documents) == 1, documents
    (document,) = documents
    assert set(document) == KEYS[target], document
    lines = text.split("\n")
    last_comment = max(at for at, line in enumerate(lines) if line.startswith("#"))
    first_value = min(at for at, line in enumerate(lines) if line and not line.startswith("#"))
    assert last_comment < first_value  # the header, then the document: no comment broke out
    return document


def _bash_n(path: Path) -> None:
    check = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stderr


def _bash(snippet: str, folder: Path) -> str:
    """Run ``snippet`` with bash in ``folder`` (a scratch one): what bash itself makes of it."""
    run = subprocess.run(
        ["bash", "-c", snippet], cwd=folder, capture_output=True, text=True, timeout=30
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


def _job_words(job: str, scratch: Path) -> tuple[list[str], list[str]]:
    """The job file's script command as the words its Python gets, and its package list as
    written for uv, each as bash reads them (run in ``scratch``, with a stand-in Python)."""
    python = scratch / ".tpuwizard" / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f"#!{sys.executable}\nimport json, sys\nprint(json.dumps(sys.argv[1:]))\n")
    python.chmod(0o755)
    lines = job.split("\n")
    verifier = max(at for at, line in enumerate(lines) if "tpu_verify.py" in line)
    argv = json.loads(_bash("\n".join(lines[verifier + 1 :]), scratch))
    (printf,) = [line for line in lines if line.startswith("printf '%s\\n' ")] or [""]
    if not printf:
        return argv, []
    _bash(printf, scratch)
    return argv, (scratch / ".tpuwizard" / "added-packages.txt").read_text().splitlines()


def _check_written(
    folder: Path,
    target: str,
    option: str | None,
    value: str,
    stdout: str,
    jobset_schema: jsonschema.Draft7Validator,
) -> None:
    """Everything written reads back as one plan holding ``value`` where it belongs; ``stdout``
    is export's --json document, which must hold it too."""
    plan = json.loads(stdout)["plan"]
    assert plan["script_args"] == ([value] if option is None else [])
    place = folder / (value if option == "--out" else "plan.out")
    out = place / TEXT_FILES[target]
    text = out.read_bytes().decode("utf-8")  # as written: read_text would turn \r into \n
    comments = [line for line in text.split("\n") if line.startswith("#")]
    if target == "xpk":
        _bash_n(out)
        commands = [line for line in text.split("\n") if line and not line.startswith("#")]
        assert len(commands) == 3, commands
        assert all(shlex.split(line)[0] == "xpk" for line in commands), commands
    else:
        document = _one_document(text, target)
        if target == "jobset":
            jobset_schema.validate(document)
            pod = document["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
            (container,) = pod["containers"]
            assert container["image"] == (value if option == "--image" else "python:3.12")
        else:
            (launch,) = [line for line in comments if line.startswith("#   sky launch")]
            inside = Path(os.path.relpath(out.resolve(), folder.resolve())).as_posix()
            assert shlex.split(launch[1:])[-1] == inside
    # The job every VM runs: one word per argument and per package, as bash reads them.
    _bash_n(place / JOB_FILENAME)
    job = (place / JOB_FILENAME).read_bytes().decode("utf-8")
    with tempfile.TemporaryDirectory() as scratch:
        argv, packages = _job_words(job, Path(scratch))
    assert argv == ["-u", "train.py", *([value] if option is None else [])]
    assert packages == plan["packages"]


def _case_ids() -> list[tuple[str | None, str, str]]:
    options: list[str | None] = [
        "--accelerator", "--slices", "--route", "--zone", "--project", "--cluster", "--name",
        "--script", "--with", "--requirements", "--jax", "--max-run", "--max-restarts",
        "--image", "--queue", "--priority", "--reservation", "--out", None,
    ]  # fmt: skip
    cases: list[tuple[str | None, str, str]] = []
    for option in options:
        for target in TARGETS:
            if option == "--image" and target != "jobset":
                continue  # refused for the other targets whatever it holds (its own test)
            cases += [(option, target, key) for key in HOSTILE]
    return cases


@pytest.mark.parametrize(
    "option, target, key",
    _case_ids(),
    ids=[f"{o or 'script-args'}-{t}-{k}" for o, t, k in _case_ids()],
)
def test_a_hostile_value_reads_back_unchanged_or_is_refused_with_nothing_written(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    option: str | None,
    target: str,
    key: str,
    jobset_schema,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text("print('hi')\n")
    value = HOSTILE[key]
    args, result = _run(tmp_path, target, option, value)
    before = {"train.py", "hostile-req.txt", value}  # what the test itself made
    made = set(_files(tmp_path)) - before
    assert not (tmp_path / "pwned").exists()
    assert "Traceback" not in result.output, result.output  # type: ignore[attr-defined]
    if result.exit_code == 2:  # type: ignore[attr-defined]
        assert made == set(), made  # refused: nothing written, no temporary file left
        error = json.loads(result.stdout)["error"]  # type: ignore[attr-defined]
        assert error["kind"] == "bad_input" and error["message"]
        return
    assert result.exit_code == 0, (args, result.output)  # type: ignore[attr-defined]
    place = Path(value if option == "--out" else "plan.out")
    assert made >= {str(place / "tpu_verify.py"), str(place / JOB_FILENAME)}
    assert not [name for name in made if name.startswith(".tpuwizard-export-")]
    _check_written(tmp_path, target, option, value, result.stdout, jobset_schema)  # type: ignore[attr-defined]


def test_the_reports_injected_pod_is_refused_and_odd_image_references_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobset_schema
) -> None:
    """The value F4 used, refused; valid references of odd shapes reach the container as typed."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text("print('hi')\n")
    _, result = _run(tmp_path, "jobset", "--image", HOSTILE["pod"])
    assert result.exit_code == 2  # type: ignore[attr-defined]
    assert "is not a container image reference" in result.stderr  # type: ignore[attr-defined]
    assert "\n---" not in result.stderr  # type: ignore[attr-defined]  # shown escaped, one line
    for image in IMAGES:
        _, result = _run(tmp_path, "jobset", "--image", image)
        assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
        _check_written(tmp_path, "jobset", "--image", image, result.stdout, jobset_schema)  # type: ignore[attr-defined]


# Valid names at the edge of each admission option's rule (issue 47): each must reach the JobSet
# where Kueue or GKE reads it, unchanged.
ADMISSION = {
    "--queue": "a.b-" + "c" * 59,
    "--priority": ".".join(["p" * 63] * 3) + "." + "x" * 61,
    "--reservation": "r" + "-9" * 31,
}


@pytest.mark.parametrize("option", ADMISSION)
def test_admission_names_at_the_edge_of_their_rules_reach_the_jobset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, option: str, jobset_schema
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text("print('hi')\n")
    value = ADMISSION[option]
    _, result = _run(tmp_path, "jobset", option, value)
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    _check_written(tmp_path, "jobset", option, value, result.stdout, jobset_schema)  # type: ignore[attr-defined]
    text = (tmp_path / "plan.out" / TEXT_FILES["jobset"]).read_text("utf-8")
    document = _one_document(text, "jobset")
    pod = document["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    found = {
        "--queue": document["metadata"].get("labels", {}).get("kueue.x-k8s.io/queue-name"),
        "--priority": pod.get("priorityClassName"),
        "--reservation": pod["nodeSelector"].get("cloud.google.com/reservation-name"),
    }
    assert found[option] == value


@pytest.mark.parametrize("key", ["newline", "line-separator", "pod", "long", "not-utf8"])
def test_script_arguments_of_every_kind_reach_the_job_as_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str, jobset_schema
) -> None:
    """Script arguments are the one free text export takes whole: it must not be refused for
    its shape (a non-UTF-8 byte is refused, saying so)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text("print('hi')\n")
    _, result = _run(tmp_path, "jobset", None, HOSTILE[key])
    if key == "not-utf8":
        assert result.exit_code == 2  # type: ignore[attr-defined]
        assert "not UTF-8 text" in result.stderr  # type: ignore[attr-defined]
        assert sorted(p.name for p in tmp_path.iterdir()) == ["train.py"]
        return
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    _check_written(tmp_path, "jobset", None, HOSTILE[key], result.stdout, jobset_schema)  # type: ignore[attr-defined]


@pytest.mark.parametrize("key", ["subshell", "quotes", "mapping", "unicode", "document"])
def test_an_out_folder_with_an_odd_printable_name_is_written_and_named_quoted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str, jobset_schema
) -> None:
    """--out names the export's folder: a printable name is taken (SkyPilot's header names the
    task in it, quoted); one with a line break or a control character is refused (the
    parametrized test above)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text("print('hi')\n")
    _, result = _run(tmp_path, "skypilot", "--out", HOSTILE[key])
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    _check_written(tmp_path, "skypilot", "--out", HOSTILE[key], result.stdout, jobset_schema)  # type: ignore[attr-defined]


@pytest.mark.parametrize("key", HOSTILE)
def test_the_yaml_writer_keeps_every_value_one_scalar_that_reads_back(key: str) -> None:
    value = HOSTILE[key]
    data = {"k": value, "list": [value, {"m": value}], "n": 1}
    assert yaml.safe_load(dump(data)) == data  # type: ignore[arg-type]


def test_every_comment_item_is_one_comment_line_whatever_it_holds() -> None:
    items = list(HOSTILE.values())
    text = comment(items) + dump({"k": "v"})
    assert text.split("\n")[: len(items)] == [
        line for line in text.split("\n") if line.startswith("#")
    ]
    assert len(text.split("\n")) == len(items) + 2  # the items, k: v, and the end
    assert list(yaml.safe_load_all(text)) == [{"k": "v"}]
    assert "\\n---\\napiVersion: v1\\nkind: Pod" in text  # said, escaped, on its line
