"""The free routes pack only what a TPU route would copy: a real folder with the report's secrets
in it (reliability round 5, F2) packs without them, for Kaggle's kernel and Colab's upload alike,
and what goes is said before anything leaves."""

from __future__ import annotations

import base64
import io
import tarfile
from pathlib import Path

import pytest

from tpuwizard.core.colab.run import prepare_run as colab_run
from tpuwizard.core.kaggle.kernel import kernel_source
from tpuwizard.core.kaggle.run import prepare_run as kaggle_run
from tpuwizard.core.launch.events.colab import ColabPlanned
from tpuwizard.core.launch.events.kaggle import KernelPlanned, KernelPushed
from tpuwizard.core.remote.sync import LocalFolder
from tpuwizard.words.event_text import describe


def project(tmp_path: Path) -> Path:
    folder = tmp_path / "proj"
    for rel, text in {
        "main.py": "print('hi')\n",
        "helper.py": "X = 1\n",
        ".env": "AWS_SECRET_ACCESS_KEY=SECRETAWS\n",
        ".ssh/id_ed25519": "SECRETSSHKEY\n",
        ".kaggle/kaggle.json": '{"username":"me","key":"SECRETKAGGLEKEY123"}',
        "data/train.csv": "1,2\n",
        ".tpuwizardignore": "data/\n!.env\n",
    }.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return folder / "main.py"


def members(packed: bytes) -> list[str]:
    with tarfile.open(fileobj=io.BytesIO(packed), mode="r:gz") as tar:
        return sorted(tar.getnames())


SENT = [".tpuwizardignore", "helper.py", "main.py"]
SECRETS = (".kaggle/", ".ssh/", ".env")


def test_kaggle_s_kernel_carries_the_folder_without_its_secrets(tmp_path):
    script = project(tmp_path)
    run = kaggle_run(script, (), (), 10, "TpuV5E8", "r1", tmp_path / "runs" / "r1", True)
    assert members(run.packed.data) == SENT
    source = kernel_source(run.spec, run.packed.data)  # what is pushed
    for secret in ("SECRETAWS", "SECRETSSHKEY", "SECRETKAGGLEKEY123"):
        assert secret.encode() not in base64.b64decode(source.split("FOLDER = '")[1].split("'")[0])
    assert run.packed.sent.files == 3 and set(run.packed.sent.secrets) == set(SECRETS)
    assert run.packed.sent.ignored == 1


def test_colab_s_upload_carries_the_folder_without_its_secrets(tmp_path):
    script = project(tmp_path)
    run = colab_run(script, (), (), 10, "r1", tmp_path / "runs" / "r1", True)
    assert members(run.packed.data) == SENT
    assert set(run.packed.sent.secrets) == set(SECRETS)


def test_the_free_routes_and_the_tpu_copy_send_the_same_files(tmp_path):
    script = project(tmp_path)
    run = kaggle_run(script, (), (), 10, "TpuV5E8", "r1", tmp_path / "runs" / "r1", True)
    assert sorted(LocalFolder.of_script(script).manifest()) == members(run.packed.data)


def test_a_linked_script_is_packed_as_its_content_under_its_own_name(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "train.py").write_text("print('target')\n")
    (elsewhere / ".env").write_text("SECRET=1\n")  # the target's folder is not the one sent
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "main.py").symlink_to(elsewhere / "train.py")
    run = colab_run(folder / "main.py", (), (), 10, "r1", tmp_path / "runs" / "r1", True)
    assert members(run.packed.data) == ["main.py"] and run.script == "main.py"
    with tarfile.open(fileobj=io.BytesIO(run.packed.data), mode="r:gz") as tar:
        member = tar.getmember("main.py")
        assert member.isfile()
        assert tar.extractfile(member).read() == b"print('target')\n"  # type: ignore[union-attr]


@pytest.mark.parametrize("route", ["kaggle", "colab"])
def test_what_is_sent_is_said_with_the_plan_and_the_secrets_by_name(tmp_path, route):
    script = project(tmp_path)
    if route == "kaggle":
        run = kaggle_run(script, (), (), 10, "TpuV5E8", "r1", tmp_path / "r", True)
        event = KernelPlanned("r1", "ada/k", "TpuV5E8", 10, "cpu", True, "r", 1.0, run.packed.sent)
        where = "inside the kernel"
    else:
        crun = colab_run(script, (), (), 10, "r1", tmp_path / "r", True)
        event = ColabPlanned("r1", "s", "v5e1", 10, "cpu", True, "r", crun.packed.sent)
        where = "to the Colab runtime"
    size = sum((script.parent / name).stat().st_size for name in SENT)
    text = "\n".join(describe(event))
    assert f"Your script's folder: 3 files, {size} bytes, sent {where}." in text
    assert "Never sent (keys, credentials, .env files): .kaggle/, .ssh/, .env." in text
    assert "Left out by .tpuwizardignore: 1 entry." in text
    assert list(event.to_dict()["folder"]["secrets"]) == [".kaggle/", ".ssh/", ".env"]


def test_a_pushed_kernel_says_it_stays_and_how_to_delete_it():
    (line,) = describe(KernelPushed("ada/tpuwizard-r1", "https://www.kaggle.com/code/x", 1))
    assert "stays in your Kaggle account" in line and "with your script's folder inside" in line
    assert "`kaggle kernels delete ada/tpuwizard-r1 -y`" in line
    assert "`tpuwizard teardown ada/tpuwizard-r1`" in line and "--delete-kernel" in line
    (practice,) = describe(KernelPushed("ada/tpuwizard-r1", "http://localhost/x", 1, practice=True))
    assert "[practice] The stand-in ends with this command, and the kernel with it." in practice
    assert "On Kaggle it would stay in your account" in practice


def test_sizes_are_said_in_decimal_units_and_a_large_folder_with_its_time():
    from tpuwizard.core.remote.sent_files import FolderSent
    from tpuwizard.words.sent_text import large_question, size_words

    said = [size_words(n) for n in (1, 999, 4200, 50_000_000, 312_000_000, 2_500_000_000)]
    assert said == ["1 byte", "999 bytes", "4.2 kB", "50 MB", "312 MB", "2.5 GB"]
    question = large_question(FolderSent(2, 300_000_000))
    assert "300 MB" in question and "about 2 min" in question and ".tpuwizardignore" in question
