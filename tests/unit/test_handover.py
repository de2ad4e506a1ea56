"""The hand-over (``tpuwizard export``): golden files per plan and target, the JobSet against
the JobSet v0.10.1 CRD's schema, quoting, and refusals.

The goldens in tests/data/handover were read by eye once; a change to them is a change to what
users are told to run. Regenerate on purpose only:
``TPUWIZARD_UPDATE_GOLDENS=1 pytest tests/unit/test_handover.py``, then read the diff.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tpuwizard.core.errors import BadInput
from tpuwizard.core.handover import jobset, skypilot, xpk
from tpuwizard.core.handover.export import render
from tpuwizard.core.handover.job import job_script, verifier_command
from tpuwizard.core.handover.plan import make_plan
from tpuwizard.core.launch.plan.packages import PackageSpec, package_names
from tpuwizard.core.plan import catalog
from tpuwizard.core.remote.bootstrap import BootstrapPlan, bootstrap_script
from tpuwizard.core.remote.packages import install_commands

DATA = Path(__file__).parents[1] / "data"
GOLDEN = DATA / "handover"
# kubernetes-sigs/jobset v0.10.1 (the version xpk 1.16.0 installs), commit
# da72d32bb0060354aa04b1a5868f3b363b088446, config/components/crd/bases/
# (tests/data/jobset/README.md).
CRD = DATA / "jobset" / "jobset.x-k8s.io_jobsets.yaml"
UPDATE = os.environ.get("TPUWIZARD_UPDATE_GOLDENS") == "1"

COMMON: dict[str, Any] = dict(
    script="train.py",
    packages=("optax",),
    script_args=("--steps", "100"),
    max_run_minutes=120,
    max_restarts=2,
)
PLANS: dict[str, dict[str, Any]] = {
    "v5litepod-16-spot": dict(accelerator="v5litepod-16", route="spot"),
    "v6e-16-flex": dict(accelerator="v6e-16", route="flex"),
    "v5p-16-x2": dict(accelerator="v5p-16", slices=2),
    "tpu7x-16": dict(accelerator="tpu7x-16"),
    # Where Kueue runs: a queue (xpk and SkyPilot refuse it), a priority class, a reservation.
    "v5p-16-kueue": dict(
        accelerator="v5p-16", queue="team-a", priority="high", reservation="my-reservation"
    ),
    "v6e-16-reserved": dict(accelerator="v6e-16", priority="very-high", reservation="my-res-2"),
}
FILES = {
    "xpk": "xpk.sh",
    "jobset": "jobset.yaml",
    "skypilot": "skypilot.yaml",
    "gcluster": "gcluster.sh",
}
HOSTILE = ("$(touch pwned)", "`touch pwned`", "a'b\"c", "; rm -rf ~ #", "two words", "x\ny", "")


def _plan(name: str, folder: str = "export-xpk"):
    """The plan, placed in the export's folder ``folder`` (core/handover/place.py)."""
    spec = PLANS[name]
    plan = make_plan(
        spec["accelerator"], **{k: v for k, v in spec.items() if k != "accelerator"}, **COMMON
    )
    return dataclasses.replace(plan, folder=folder)


def _text(target: str, name: str) -> str:
    """The target's text, or its refusal (SkyPilot cannot take every plan), as held in a file."""
    try:
        return render(target, _plan(name, f"export-{target}"))
    except BadInput as err:
        return f"refused: {err}\n"


def _golden(path: Path, text: str) -> None:
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    assert path.exists(), f"no golden {path}: TPUWIZARD_UPDATE_GOLDENS=1 writes it (read it)"
    assert text == path.read_text("utf-8"), f"{path} differs (regenerate on purpose only)"


@pytest.mark.parametrize("target", FILES)
@pytest.mark.parametrize("name", PLANS)
def test_each_plan_and_target_matches_its_golden(name: str, target: str) -> None:
    _golden(GOLDEN / name / FILES[target], _text(target, name))


@pytest.mark.parametrize("name", PLANS)
def test_the_job_every_target_runs_matches_its_golden(name: str) -> None:
    _golden(GOLDEN / name / "job.sh", job_script(_plan(name)))


def test_the_job_runs_launchs_own_bootstrap_then_the_verifier_then_the_script() -> None:
    plan = _plan("v5p-16-x2")
    script = job_script(plan)
    specs = [PackageSpec("optax", "--with")]
    boot = bootstrap_script(BootstrapPlan(), install_commands(["optax"]), package_names(specs))
    assert boot in script  # the very text launch runs on a TPU VM
    at_boot, at_verify = script.index(boot), script.index(verifier_command(plan))
    at_script = script.index(".tpuwizard/venv/bin/python -u train.py --steps 100")
    assert at_boot < at_verify < at_script
    # Two slices of two VMs: four processes join, 2 x 8 devices (v5p: one device per chip).
    assert "--num-processes 4 --global-devices 16" in verifier_command(plan)


def test_the_job_installs_the_workers_jax_chosen_from_the_table() -> None:
    """export --jax (and the wizard's F3) pins the job's jax[tpu] as launch --jax does."""
    from tpuwizard.core.plan.jax_versions import DEFAULT, TABLE

    newest = next(v.version for v in reversed(TABLE) if v != DEFAULT)  # another than the default
    chosen = job_script(make_plan("v5p-16", jax=newest))
    assert f"jax[tpu]=={newest}" in chosen and f"jax[tpu]=={DEFAULT.version}" not in chosen
    assert f"jax[tpu]=={DEFAULT.version}" in job_script(make_plan("v5p-16"))


def test_every_target_runs_the_same_job_file_from_the_exports_folder() -> None:
    """Issue 55.9: the job and the verifier sit in the export's folder, which each target names
    from the folder shipped (xpk writes its JobSet there too, not beside the script)."""
    plan = _plan("v5litepod-16-spot", "my export")
    create = xpk.workload_create(plan, dry_run=False)
    assert "--command 'bash '\"'\"'my export/tpuwizard_job.sh'\"'\"''" in create
    assert "--output-manifest-file 'my export/tpuwizard-run-jobset.yaml'" in create
    manifest: Any = jobset.manifest(plan)  # JSON, read along one path
    containers = manifest["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
        "containers"
    ]
    assert containers[0]["command"] == ["bash", "my export/tpuwizard_job.sh"]
    assert skypilot.task(plan)["run"] == "bash 'my export/tpuwizard_job.sh'"
    assert " -u 'my export/tpu_verify.py' " in job_script(plan)
    assert skypilot.launch_line(plan).endswith(" 'my export/tpuwizard-run.sky.yaml'")


@pytest.fixture(scope="module")
def jobset_schema() -> jsonschema.Draft7Validator:
    """The CRD's v1alpha2 schema, checked once (validate() would check it at every call)."""
    crd = yaml.load(CRD.read_text("utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha2"]
    schema = version["schema"]["openAPIV3Schema"]
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


@pytest.mark.parametrize("name", PLANS)
def test_the_jobset_is_valid_by_the_jobset_crd_and_reads_back_as_written(
    name: str, jobset_schema: jsonschema.Draft7Validator
) -> None:
    plan = _plan(name)
    text = jobset.render(plan)
    loaded = yaml.safe_load(text)
    assert loaded == jobset.manifest(plan)  # the YAML writer kept every value
    jobset_schema.validate(loaded)
    job = loaded["spec"]["replicatedJobs"][0]
    assert job["replicas"] == plan.slices
    assert (
        job["template"]["spec"]["parallelism"]
        == plan.gke.vms
        == job["template"]["spec"]["completions"]
    )
    assert job["template"]["spec"]["activeDeadlineSeconds"] == 7200
    assert loaded["spec"]["failurePolicy"]["maxRestarts"] == 2


def test_the_crd_schema_refuses_a_wrong_jobset(jobset_schema: jsonschema.Draft7Validator) -> None:
    """The validation can fail: a count as text, or a replicated job without its name."""
    bad: Any = jobset.manifest(_plan("v5p-16-x2"))  # JSON, spoilt along one path
    bad["spec"]["replicatedJobs"][0]["replicas"] = "two"
    with pytest.raises(jsonschema.ValidationError):
        jobset_schema.validate(bad)
    bad = jobset.manifest(_plan("v5p-16-x2"))
    del bad["spec"]["replicatedJobs"][0]["name"]
    with pytest.raises(jsonschema.ValidationError):
        jobset_schema.validate(bad)


def test_hostile_script_arguments_reach_the_script_unchanged(tmp_path: Path) -> None:
    """Run the job file's script line with a stand-in Python that prints what it was given."""
    plan = make_plan("v6e-16", script="train.py", script_args=HOSTILE)
    python = tmp_path / ".tpuwizard" / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f"#!{sys.executable}\nimport json, sys\nprint(json.dumps(sys.argv[1:]))\n")
    python.chmod(0o755)
    after_verifier = job_script(plan).split(f"{verifier_command(plan)} || exit $?\n")[1]
    run = subprocess.run(
        ["bash", "-c", after_verifier], cwd=tmp_path, capture_output=True, text=True, timeout=30
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == ["-u", "train.py", *HOSTILE]
    assert not (tmp_path / "pwned").exists()


def test_every_xpk_line_splits_back_into_the_values_given() -> None:
    plan = make_plan(
        "v5litepod-16",
        cluster="my-cluster",
        workload="w-1",
        project="my-project-1",
        zone="us-west4-a",
    )
    for line in xpk.commands(plan):
        words = shlex.split(line)
        assert words[words.index("--project") + 1] == "my-project-1"
        assert words[words.index("--cluster") + 1] == "my-cluster"


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(accelerator="v9-8"), "not a TPU accelerator type"),
        (dict(accelerator="v3-8"), "cannot go to GKE"),
        (dict(accelerator="v5p-16", slices=0), "--slices must be 1"),
        (dict(accelerator="v5p-16", workload="Bad_Name"), "--name 'Bad_Name'"),
        (dict(accelerator="v5p-16", cluster="a;b"), "--cluster 'a;b'"),
        (dict(accelerator="v5p-16", zone="us-central1-a; id"), "not a zone name"),
        (dict(accelerator="v5p-16", project="$(id)"), "not a project ID"),
        (dict(accelerator="v5p-16", script="-x.py"), "Script name"),
        (dict(accelerator="v5p-16", script="a b.py"), "Script name"),
        (dict(accelerator="v5p-16", max_run_minutes=0), "deadline must be between"),
        (dict(accelerator="v5p-16", max_restarts=-1), "--max-restarts must be 0"),
        (dict(accelerator="v5p-16", jax="0.13.0"), "not in tpuwizard's table"),
    ],
)
def test_bad_plans_are_refused_with_what_to_type(kwargs: dict, words: str) -> None:
    accelerator = kwargs.pop("accelerator")
    with pytest.raises(BadInput, match=None) as err:
        make_plan(accelerator, **kwargs)
    assert words in str(err.value)


@pytest.mark.parametrize(
    "accelerator, topology, vms",
    [
        ("v5litepod-16", "4x4", 4),
        ("v5litepod-8", "2x4", 2),  # GKE: two 4-chip VMs, as xpk makes it
        ("v6e-256", "16x16", 64),
        ("v5p-8", "2x2x1", 1),
        ("v5p-128", "4x4x4", 16),
        ("v5p-1024", "8x8x8", 128),
        ("tpu7x-16", "2x2x2", 2),
    ],
)
def test_gke_topologies_are_xpks(accelerator: str, topology: str, vms: int) -> None:
    plan = make_plan(accelerator)
    assert (plan.gke.topology, plan.gke.vms) == (topology, vms)


def test_the_larger_slice_is_the_one_of_fewest_chips_that_holds_the_state() -> None:
    from tpuwizard.core.handover.larger import larger_slice, larger_slice_text, launch_backends

    found = larger_slice(3100)
    assert found is not None and (found.name, found.chips) == ("tpu7x-64", 32)
    # v5p's compiler limit (95.74 GiB a chip, issue 54) holds 3000 GiB on its 32 chips.
    at_limit = larger_slice(3000)
    assert at_limit is not None and (at_limit.name, at_limit.chips) == ("v5p-64", 32)
    assert larger_slice(20000) is not None and larger_slice(20000).name == "v5p-512"  # type: ignore[union-attr]
    assert launch_backends(catalog.parse_accelerator("tpu7x-64")) == ("compute",)
    assert launch_backends(catalog.parse_accelerator("v5litepod-16")) == ("tpu-api",)
    assert larger_slice(1e6) is None
    assert "No single slice in tpuwizard's catalog holds" in larger_slice_text(1e6, 0.06, "vm")


def test_fit_the_wizard_and_plain_mode_add_the_larger_slice_only_when_none_listed_holds() -> None:
    from tpuwizard.core.handover.larger import verdict_with_larger
    from tpuwizard.core.plan import fit

    listed = fit.select_slices(single_host=True)
    small = verdict_with_larger(48, fit.plan(48, listed))
    assert small == fit.verdict(48, fit.plan(48, listed))  # something listed holds it: as before
    short = verdict_with_larger(3100, fit.plan(3100, listed), short=True)
    assert short.startswith("None of these holds 3100.0 GiB. The smallest single slice that")
    assert "tpu7x-64 (32 chips, 8 VMs" in short and "launch can make it" in short
    assert "export" not in short and "not room" not in short  # a slice holds it: one answer


@pytest.mark.parametrize(
    ("gib", "names", "said", "unsaid"),
    [
        # Issue 55: one answer. A larger slice holds it: that slice, named outside the table,
        # made by launch; no hand-over, no Multislice, no "go beyond one slice".
        (3100, ["v5litepod-8"], ("smallest single slice that does is tpu7x-64 (32 chips, 8 VMs, "
         "not in the table above)", "tpuwizard launch --accelerator tpu7x-64 makes it (Compute "
         "Engine)."), ("export", "Multislice", "beyond one slice", "No single slice")),
        (70, ["v5litepod-4"], ("is v6e-4 (4 chips, one VM, not in the table above), about $",
         "makes it (the TPU API or Compute Engine)."), ("export", "not room")),
        # No single slice holds it: then, and only then, Multislice and the hand-over.
        (1e6, ["v5litepod-8"], ("No single slice in tpuwizard's catalog holds", "make the state "
         "smaller", "tpuwizard export --slices N"), ("None of the slices above", "launch")),
    ],
)  # fmt: skip
def test_fit_gives_one_answer_when_nothing_listed_holds(gib, names, said, unsaid) -> None:
    from tpuwizard.core.handover.larger import verdict_with_larger
    from tpuwizard.core.plan import fit

    words = " ".join(verdict_with_larger(gib, fit.plan(gib, fit.select_slices(
        [catalog.parse_accelerator(n) for n in names]))).split())  # fmt: skip
    assert all(part in words for part in said), words
    assert not any(part in words for part in unsaid), words
