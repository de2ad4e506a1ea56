"""The Kaggle route's core without Kaggle: credentials found as kaggle 2.2.5 finds them, the
kernel it pushes, what it refuses before a push, and each ending's diagnosis (with an in-memory
stand-in for the client)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.receipt_fixtures import verifier_receipt
from tpuwizard.core.errors import BadInput
from tpuwizard.core.exit_codes import EXIT_CLOUD, EXIT_FAILED, EXIT_OK
from tpuwizard.core.kaggle import kernel
from tpuwizard.core.kaggle.credentials import KaggleCredentials, NoCredentials, find_credentials
from tpuwizard.core.kaggle.ledger import KernelLedger
from tpuwizard.core.kaggle.protocol import Downloaded, KaggleCallFailed, Pushed, Quota
from tpuwizard.core.kaggle.run import prepare_run, run_kernel, stop_kernel
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.events.kaggle import (
    KernelDeleted,
    KernelLeftRunning,
    KernelPushed,
    KernelState,
)
from tpuwizard.words.choice_words import all_words

# ---- credentials ----


def test_a_token_in_kaggle_api_token_comes_first(tmp_path):
    (tmp_path / ".kaggle").mkdir()
    (tmp_path / ".kaggle" / "kaggle.json").write_text('{"username": "u", "key": "k"}')
    found = find_credentials({"KAGGLE_API_TOKEN": "KGAT_abc"}, tmp_path)
    assert found == KaggleCredentials("token", "KAGGLE_API_TOKEN")


def test_kaggle_api_token_may_name_a_file_holding_the_token(tmp_path):
    token = tmp_path / "tok"
    token.write_text("KGAT_abc\n")
    found = find_credentials({"KAGGLE_API_TOKEN": str(token)}, tmp_path)
    assert isinstance(found, KaggleCredentials) and str(token) in found.source


def test_the_access_token_file_in_dot_kaggle(tmp_path):
    (tmp_path / ".kaggle").mkdir()
    (tmp_path / ".kaggle" / "access_token").write_text("KGAT_abc")
    found = find_credentials({}, tmp_path)
    assert isinstance(found, KaggleCredentials) and found.kind == "token"


def test_kaggle_json_in_kaggle_config_dir_before_dot_kaggle(tmp_path):
    config = tmp_path / "cfg"
    config.mkdir()
    (config / "kaggle.json").write_text('{"username": "ada", "key": "k1"}')
    (tmp_path / ".kaggle").mkdir()
    (tmp_path / ".kaggle" / "kaggle.json").write_text('{"username": "bob", "key": "k2"}')
    found = find_credentials({"KAGGLE_CONFIG_DIR": str(config)}, tmp_path)
    assert found == KaggleCredentials("legacy key", str(config / "kaggle.json"), "ada")


def test_xdg_config_home_only_when_dot_kaggle_does_not_exist(tmp_path):
    xdg = tmp_path / "xdg"
    (xdg / "kaggle").mkdir(parents=True)
    (xdg / "kaggle" / "kaggle.json").write_text('{"username": "ada", "key": "k1"}')
    found = find_credentials({"XDG_CONFIG_HOME": str(xdg)}, tmp_path)
    assert isinstance(found, KaggleCredentials) and found.username == "ada"
    (tmp_path / ".kaggle").mkdir()  # now kaggle reads ~/.kaggle, which holds nothing
    assert isinstance(find_credentials({"XDG_CONFIG_HOME": str(xdg)}, tmp_path), NoCredentials)


def test_username_and_key_from_the_environment(tmp_path):
    found = find_credentials({"KAGGLE_USERNAME": "ada", "KAGGLE_KEY": "k"}, tmp_path)
    assert found == KaggleCredentials("legacy key", "KAGGLE_USERNAME and KAGGLE_KEY", "ada")


def test_nothing_found_names_where_it_looked(tmp_path):
    found = find_credentials({}, tmp_path)
    assert isinstance(found, NoCredentials)
    assert "KAGGLE_API_TOKEN" in found.looked_at
    assert str(tmp_path / ".config" / "kaggle" / "kaggle.json") in found.looked_at


# ---- the kernel ----


def test_a_retired_shape_is_refused_naming_what_kaggle_would_run_instead():
    with pytest.raises(BadInput, match=r"retired.*CPU instead"):
        kernel.machine_shape("TpuV232")
    with pytest.raises(BadInput, match="not a TPU Kaggle offers"):
        kernel.machine_shape("v4-8")
    assert kernel.machine_shape(None) == kernel.machine_shape("v5litepod-8") == "TpuV5E8"


def _spec(**changes) -> kernel.KernelSpec:
    fields = dict(
        username="ada",
        name=kernel.kernel_name("20261202-010203-ab12"),
        shape="TpuV5E8",
        timeout_s=600,
        script="main.py",
        script_args=("--steps", "3"),
        fetch=("*.txt",),
        expect="tpu",
    )
    fields.update(changes)
    return kernel.KernelSpec(**fields)


def test_metadata_is_private_on_a_tpu_and_pins_no_image():
    from slugify import slugify  # kaggle warns when the title does not resolve to the slug

    meta = kernel.metadata(_spec())
    assert meta["is_private"] is True and meta["enable_tpu"] is True
    assert meta["machine_shape"] == "TpuV5E8"
    assert "docker_image" not in meta and "docker_image_pinning_type" not in meta
    assert meta["id"] == "ada/tpuwizard-20261202-010203-ab12"
    assert slugify(meta["title"]) == meta["id"].split("/")[1]


def test_the_kernel_script_carries_the_verifier_and_the_folder(tmp_path):
    import base64
    import io
    import tarfile

    from tpuwizard.core.evidence.verifier import verifier_source

    (tmp_path / "main.py").write_text("print('hi')\n")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "x.pyc").write_bytes(b"\0")
    source = kernel.kernel_source(_spec(), kernel.pack_folder(tmp_path).data)
    compile(source, kernel.KERNEL_FILE, "exec")
    values: dict = {}
    exec(source.split("\nimport ", 1)[0], values)  # only the constants
    assert base64.b64decode(values["VERIFIER"]).decode() == verifier_source()
    with tarfile.open(fileobj=io.BytesIO(base64.b64decode(values["FOLDER"]))) as packed:
        assert packed.getnames() == ["main.py"]
    settings = json.loads(values["SETTINGS"])
    assert settings["expect"] == "tpu" and settings["args"] == ["--steps", "3"]


def test_a_folder_over_the_limit_is_refused_with_the_limit_named(tmp_path):
    (tmp_path / "main.py").write_text("print('hi')\n")
    (tmp_path / "weights.bin").write_bytes(os.urandom(kernel.PACKED_LIMIT_BYTES + 4096))
    with pytest.raises(BadInput, match=r"more than 1024 KiB.*nothing was pushed"):
        kernel.pack_folder(tmp_path)


def test_max_run_becomes_the_session_timeout_and_practice_expects_cpu(tmp_path):
    (tmp_path / "main.py").write_text("print('hi')\n")
    run = prepare_run(tmp_path / "main.py", (), (), 2.5, "TpuV5E8", "r1", tmp_path / "r", True)
    assert run.spec.timeout_s == 150 and run.spec.expect == "cpu"
    real = prepare_run(tmp_path / "main.py", (), (), None, "TpuV5E8", "r1", tmp_path / "r", False)
    assert real.spec.expect == "tpu" and real.spec.timeout_s == 3600


# ---- a run, against an in-memory Kaggle ----


class FakeKernels:
    username = "ada"

    def __init__(self, tmp: Path, *, quota_left=3600.0, error=None, receipt=None, image=None):
        self.tmp, self.quota_left, self.error, self.image = tmp, quota_left, error, image
        self.receipt = receipt or verifier_receipt("tpu", 8, kind="TPU v5 lite")
        self.states = ["QUEUED", "RUNNING", "COMPLETE"]
        self.pushed: list[dict] = []
        self.ledger_at_push: list[dict] = []
        self.ledger: KernelLedger | None = None
        self.deleted = []

    def tpu_quota(self) -> Quota | None:
        return Quota(used_s=72000 - self.quota_left, allowed_s=72000)

    def push(self, folder: Path, timeout_s: int, shape: str) -> Pushed:
        assert self.ledger is not None
        self.ledger_at_push = list(self.ledger.last_words().values())
        self.pushed.append(json.loads((folder / kernel.METADATA_FILE).read_text()))
        return Pushed("/code/ada/k", "https://www.kaggle.com/code/ada/k", 1, self.error)

    def status(self, ref: str) -> tuple[str, str | None]:
        if self.states == ["gone"]:
            raise KaggleCallFailed("reading the kernel's status", "Kernel not found", 404)
        state = self.states.pop(0) if len(self.states) > 1 else self.states[0]
        return state, None

    def log_lines(self, ref: str) -> Iterator[str]:
        yield "PASS backend"
        yield 'TPUWIZARD {"kind": "check"}'

    def download(self, ref: str, folder: Path) -> Downloaded:
        ours = folder / kernel.OUTPUT_FOLDER
        ours.mkdir(parents=True)
        (ours / "receipt.json").write_text(json.dumps(self.receipt))
        (ours / "output.txt").write_text("loss 0.1\n")
        if self.script_exit is not None:  # as the kernel's runner writes them
            (ours / "script_exit").write_text(self.script_exit)
            (ours / "files").mkdir()
            (ours / "files" / "result.txt").write_text("done")
        for name, _ in self.missed:  # listed, and failed on their own: never written
            (folder / name).unlink(missing_ok=True)
        return Downloaded([ours / "receipt.json"], list(self.missed))

    script_exit: str | None = None
    missed: tuple[tuple[str, str], ...] = ()

    def docker_image(self, ref: str) -> str | None:
        return self.image

    def delete(self, ref: str) -> None:
        self.deleted.append(ref)
        self.states = ["gone"]

    deleted: list[str]


def _run(tmp_path, fake, practice=False, delete=False):
    (tmp_path / "src").mkdir(exist_ok=True)
    (tmp_path / "src" / "main.py").write_text("print('hi')\n")
    run = prepare_run(
        tmp_path / "src" / "main.py",
        (),
        (),
        10,
        "TpuV5E8",
        "r1",
        tmp_path / "run",
        practice,
        delete,
    )
    ledger = KernelLedger(tmp_path / "ledger.jsonl")
    fake.ledger = ledger
    return run, ledger, list(run_kernel(fake, run, ledger, poll_s=0))


def test_a_run_is_recorded_before_its_push_and_its_receipt_checked(tmp_path):
    fake = FakeKernels(tmp_path)
    run, ledger, events = _run(tmp_path, fake)
    assert [r["op"] for r in fake.ledger_at_push] == ["intent"]
    states = [e.state for e in events if isinstance(e, KernelState)]
    assert states == ["QUEUED", "RUNNING", "COMPLETE"]
    lines = [e.text for e in events if isinstance(e, ev.ScriptLine)]
    assert lines == ["PASS backend"]  # the verifier's JSON twin stays in the log only
    saved = next(e for e in events if isinstance(e, ev.ReceiptSaved))
    assert saved.ok and events[-1] == ev.Finished(True, EXIT_OK, str(run.run_dir), None)
    assert (run.run_dir / "receipt.json").is_file() and (run.run_dir / "output.txt").is_file()
    assert ledger.open_sessions() == []


def test_a_runs_summary_holds_its_checks_its_scripts_exit_its_files_and_the_kept_kernel(
    tmp_path,
):
    """What the wizard's and plain mode's Summary are folded from: the receipt's checks, the
    script's exit code as the runner wrote it, its files, and the kernel that stays."""
    from tpuwizard.core.launch.events.summary import RunSummary
    from tpuwizard.words.summary_text import summary_lines

    fake = FakeKernels(tmp_path)
    fake.script_exit = "0"
    run, _, events = _run(tmp_path, fake)
    summary = RunSummary()
    for event in events:
        summary.apply(event)
    said = "\n".join(summary_lines(summary, "wizard"))
    assert "Checks: 7 of 7 PASS" in said and "PASS contract" in said
    assert "Your script: exit 0." in said and f"{run.run_dir / 'output.txt'}" in said
    assert f"Copied back: {run.run_dir / 'files' / 'result.txt'}" in said
    kernel_ = f"ada/{run.spec.name}"
    assert f"Kernel {kernel_}: kept in your Kaggle account as this run's record" in said
    assert f"`tpuwizard teardown {kernel_}` deletes it" in said
    for wrong in ("none ran", "did not finish", "Nothing was created", "Nothing was copied"):
        assert wrong not in said


@pytest.mark.parametrize(
    ("missed", "said", "receipt"),
    [
        # The script's file with a name no disk here takes: the rest of the run stays.
        ("tpuwizard/files/out/caf\udce9.txt", "files/out/caf\\xe9.txt", True),
        ("tpuwizard/output.txt", "output.txt", True),  # the output lost, the receipt kept
        ("tpuwizard/receipt.json", "receipt.json", False),  # no receipt: said as before
    ],
)
def test_one_output_file_that_does_not_come_loses_only_itself_and_is_named(
    tmp_path, missed, said, receipt
):
    """Reliability round 6, G6: one failing file lost the receipt, the output and the rest."""
    from tpuwizard.core.kaggle.output import shown_name

    fake = FakeKernels(tmp_path)
    fake.script_exit = "0"
    fake.missed = ((shown_name(missed), "Kaggle answered (HTTP 404): not found"),)
    run, _, events = _run(tmp_path, fake)
    [not_fetched] = [e for e in events if isinstance(e, ev.FileNotFetched)]
    assert not_fetched.path.endswith(said) and not_fetched.incomplete
    assert not_fetched.path.startswith(str(run.run_dir)) and "HTTP 404" in not_fetched.reason
    assert events[-1] == ev.Finished(False, EXIT_FAILED, str(run.run_dir), None)
    assert (run.run_dir / "receipt.json").is_file() == receipt
    assert (run.run_dir / "files" / "result.txt").read_text() == "done"  # the others came
    assert any(isinstance(e, ev.ScriptFinished) for e in events)
    assert any(isinstance(e, ev.ReceiptSaved) for e in events) == receipt


def test_a_kernel_deleted_on_request_is_said_deleted_in_the_summary(tmp_path):
    from tpuwizard.core.launch.events.summary import RunSummary
    from tpuwizard.words.summary_text import summary_lines

    fake = FakeKernels(tmp_path)
    fake.script_exit = "0"
    run, _, events = _run(tmp_path, fake, delete=True)
    summary = RunSummary()
    for event in events:
        summary.apply(event)
    said = "\n".join(summary_lines(summary))
    assert f"Kernel ada/{run.spec.name} deleted from your Kaggle account" in said
    assert "kept in your Kaggle account" not in said and "Nothing was created" not in said


def test_a_cpu_run_fails_and_names_a_pinned_image(tmp_path):
    fake = FakeKernels(tmp_path, receipt=verifier_receipt("cpu", 8), image="gcr.io/pin@sha256:1")
    _, _, events = _run(tmp_path, fake)
    failed = next(e for e in events if isinstance(e, ev.Failed))
    assert failed.diagnosis.kind == "kaggle_cpu_run"
    assert "gcr.io/pin@sha256:1" in failed.diagnosis.explanation
    assert "not the expected tpu" in failed.diagnosis.explanation
    assert events[-1].exit_code == EXIT_FAILED


def test_a_cpu_run_without_a_pin_names_no_cause_it_does_not_know(tmp_path):
    fake = FakeKernels(tmp_path, receipt=verifier_receipt("cpu", 8))
    _, _, events = _run(tmp_path, fake)
    failed = next(e for e in events if isinstance(e, ev.Failed))
    assert "pin" not in failed.diagnosis.explanation.lower()


def test_an_exhausted_quota_ends_it_before_any_push(tmp_path):
    fake = FakeKernels(tmp_path, quota_left=0)
    _, ledger, events = _run(tmp_path, fake)
    assert fake.pushed == [] and ledger.last_words() == {}
    assert next(e for e in events if isinstance(e, ev.Failed)).diagnosis.kind == "kaggle_quota"
    assert events[-1].exit_code == EXIT_CLOUD


def test_a_push_refused_for_phone_verification_says_what_to_do(tmp_path):
    fake = FakeKernels(tmp_path, error="Phone verification is required")
    _, ledger, events = _run(tmp_path, fake)
    failed = next(e for e in events if isinstance(e, ev.Failed))
    assert failed.diagnosis.kind == "kaggle_unverified"
    assert "phone" in str(failed.diagnosis.next_steps[0]).lower()
    assert events[-1].exit_code == EXIT_CLOUD and ledger.open_sessions() == []


def test_a_kernel_error_after_a_good_receipt_is_the_script_s_failure(tmp_path):
    fake = FakeKernels(tmp_path)
    fake.states = ["RUNNING", "ERROR"]
    _, _, events = _run(tmp_path, fake)
    failed = next(e for e in events if isinstance(e, ev.Failed))
    assert failed.stage == "script" and events[-1].exit_code == EXIT_FAILED


def test_a_stop_on_a_running_kernel_says_it_is_left_running_and_keeps_it_open(tmp_path):
    (tmp_path / "main.py").write_text("print('hi')\n")
    run = prepare_run(tmp_path / "main.py", (), (), 10, "TpuV5E8", "r1", tmp_path / "run", False)
    ledger = KernelLedger(tmp_path / "ledger.jsonl")
    fake = FakeKernels(tmp_path)
    assert list(stop_kernel(fake, run, ledger)) == []  # nothing pushed: nothing to ask about
    ledger.record("pushed", "ada/" + run.spec.name, "r1", url="u", ends_by=123.0)
    fake.states = ["RUNNING"]
    [left] = stop_kernel(fake, run, ledger)
    assert isinstance(left, KernelLeftRunning) and left.ends_by == 123.0
    assert ledger.open_sessions()
    fake.states = ["COMPLETE"]
    [ended] = stop_kernel(fake, run, ledger)
    assert isinstance(ended, KernelState) and ledger.open_sessions() == []


def test_the_words_for_a_kernel_left_running_say_it_was_not_cancelled_and_where_to_stop_it():
    from tpuwizard.words.event_text import describe

    left = KernelLeftRunning("ada/k", "RUNNING", 0.0, "https://www.kaggle.com/code/ada/k")
    [line] = describe(left)
    assert "could not be cancelled" in line and line.endswith("https://www.kaggle.com/code/ada/k")
    [practice] = describe(KernelLeftRunning("ada/k", "RUNNING", 0.0, "u", practice=True))
    assert practice.startswith("[practice]") and "ends with this command" in practice


def test_a_tpu_receipt_with_fewer_devices_than_the_shape_has_does_not_prove_the_run(tmp_path):
    fake = FakeKernels(tmp_path, receipt=verifier_receipt("tpu", 4, kind="TPU v5 lite"))
    _, _, events = _run(tmp_path, fake)
    failed = next(e for e in events if isinstance(e, ev.Failed))
    assert "4 devices, but v5litepod-8 has 8" in failed.diagnosis.explanation


class LostAnswer(FakeKernels):
    """The push lands, and its answer is lost on the way back."""

    def __init__(self, tmp: Path, landed: bool):
        super().__init__(tmp)
        self.landed = landed

    def push(self, folder: Path, timeout_s: int, shape: str) -> Pushed:
        super().push(folder, timeout_s, shape)
        raise KaggleCallFailed("pushing the kernel", "Connection reset by peer", None)

    def status(self, ref: str) -> tuple[str, str | None]:
        if not self.landed:
            raise KaggleCallFailed("reading the kernel's status", "Kernel not found", 404)
        return super().status(ref)


def test_a_push_whose_answer_is_lost_is_found_by_its_slug_and_not_pushed_again(tmp_path):
    fake = LostAnswer(tmp_path, landed=True)
    _, _, events = _run(tmp_path, fake)
    [pushed] = [e for e in events if isinstance(e, KernelPushed)]
    assert pushed.found_after_lost_answer and len(fake.pushed) == 1
    assert events[-1].exit_code == EXIT_OK


def test_a_push_whose_answer_is_lost_and_that_did_not_land_ends_closed(tmp_path):
    fake = LostAnswer(tmp_path, landed=False)
    _, ledger, events = _run(tmp_path, fake)
    assert len(fake.pushed) == 1 and not [e for e in events if isinstance(e, KernelPushed)]
    assert events[-1].exit_code == EXIT_CLOUD and ledger.open_sessions() == []
    [failed] = [e for e in events if isinstance(e, ev.Failed)]
    said = failed.diagnosis
    assert "HTTP 404" not in said.explanation  # the 404 was the look for it, not the push's
    assert "No answer came (Connection reset by peer)" in said.explanation
    assert "A push Kaggle answers late can still land" in said.explanation
    assert any("https://www.kaggle.com/code/" in step for step in all_words(said.next_steps, "cli"))
    assert any("kaggle kernels list --mine" in step for step in all_words(said.next_steps, "cli"))


def test_the_kernel_stays_unless_asked_and_a_delete_is_verified_by_asking_for_it(tmp_path):
    fake = FakeKernels(tmp_path)
    _, _, events = _run(tmp_path, fake)
    assert fake.deleted == [] and not [e for e in events if isinstance(e, KernelDeleted)]
    (tmp_path / "again").mkdir()
    fake = FakeKernels(tmp_path / "again")
    _, _, events = _run(tmp_path / "again", fake, delete=True)
    [deleted] = [e for e in events if isinstance(e, KernelDeleted)]
    assert deleted.verified and fake.deleted == [deleted.kernel]
    assert isinstance(events[-1], ev.Finished) and events[-1].ok


class DroppedNetwork(FakeKernels):
    """Status reads that get no answer at all (no HTTP status) ``drops`` times after the first."""

    def __init__(self, tmp: Path, drops: int):
        super().__init__(tmp)
        self.drops, self.reads = drops, 0

    def status(self, ref: str) -> tuple[str, str | None]:
        self.reads += 1
        if self.reads > 1 and self.drops:
            self.drops -= 1
            raise KaggleCallFailed("reading the kernel's status", "Connection reset by peer")
        return super().status(ref)


def test_a_status_read_lost_once_is_tried_again_and_the_run_goes_on(tmp_path):
    _, _, events = _run(tmp_path, DroppedNetwork(tmp_path, drops=1))
    assert events[-1].exit_code == EXIT_OK


def test_a_network_that_stays_down_ends_with_a_diagnosis_and_the_session_left_open(tmp_path):
    _, ledger, events = _run(tmp_path, DroppedNetwork(tmp_path, drops=100))
    failed = next(e for e in events if isinstance(e, ev.Failed))
    assert failed.diagnosis.kind == "kaggle_connection_lost"
    assert "ada/tpuwizard-r1 was pushed, and may still run" in failed.diagnosis.explanation
    assert "tpuwizard status" in str(failed.diagnosis.next_steps[0])
    assert events[-1].exit_code == EXIT_CLOUD
    assert [r["op"] for r in ledger.open_sessions()] == ["pushed"]  # status will ask again


def test_packages_turn_the_kernel_s_internet_on_and_reach_its_settings():
    spec = _spec(packages=("optax>=0.2",))
    assert kernel.metadata(spec)["enable_internet"] is True
    assert kernel.metadata(_spec())["enable_internet"] is False
    assert '"packages": ["optax>=0.2"]' in kernel.kernel_source(spec, b"")


@pytest.mark.parametrize(
    ("text", "words"),
    [("jax[tpu]", "the kernel's own JAX"), ("-r x.txt", "not a package requirement")],
)
def test_packages_that_would_change_jax_or_are_not_requirements_are_refused(tmp_path, text, words):
    from tpuwizard.core.launch.plan.packages import PackageSpec

    (tmp_path / "main.py").write_text("print(1)\n")
    with pytest.raises(BadInput, match=words):
        prepare_run(
            tmp_path / "main.py",
            (),
            (),
            10,
            "TpuV5E8",
            "r1",
            tmp_path / "run",
            False,
            packages=(PackageSpec(text, "--with"),),
        )
