"""The weekly Kaggle TPU quota as the Route step and the plan line say it: practice says the
figure is the stand-in's; a real read without credentials says so and asks nothing."""

from __future__ import annotations

from tpuwizard.core.kaggle.protocol import Quota
from tpuwizard.core.launch.events.kaggle import KernelPlanned
from tpuwizard.session.free.kaggle_quota import QuotaRead, weekly_tpu_quota
from tpuwizard.words.kaggle_text import kaggle_lines, quota_words


def planned(practice: bool) -> KernelPlanned:
    return KernelPlanned("r1", "ada/tpuwizard-r1", "TpuV5E8", 60, "tpu", practice, "runs/r1", 7200)


def test_the_plan_line_says_a_practice_quota_is_the_stand_ins_figure():
    [practice] = kaggle_lines(planned(True))
    [real] = kaggle_lines(planned(False))
    assert "TPU quota left this week: 2.0 h (the practice stand-in's figure)" in practice
    assert "TPU quota left this week: 2.0 h." in real and "stand-in" not in real


def test_practice_reads_the_stand_ins_own_answer_with_its_faults(monkeypatch):
    monkeypatch.delenv("TPUWIZARD_KAGGLE_FAULTS", raising=False)
    read = weekly_tpu_quota(practice=True)
    assert read == QuotaRead(Quota(used_s=0.0, allowed_s=72000.0), practice=True)
    monkeypatch.setenv("TPUWIZARD_KAGGLE_FAULTS", "quota_exhausted")
    assert weekly_tpu_quota(practice=True).quota.left_s == 0  # type: ignore[union-attr]


def test_a_real_read_without_credentials_says_so_and_asks_nothing(tmp_path, monkeypatch):
    for name in ("KAGGLE_API_TOKEN", "KAGGLE_CONFIG_DIR", "KAGGLE_USERNAME", "KAGGLE_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    read = weekly_tpu_quota(practice=False)
    assert read.quota is None and read.problem == "no Kaggle credentials were found"
    assert quota_words(read) == "Kaggle TPU left: not known (no Kaggle credentials were found)"


def test_the_route_steps_words():
    left = QuotaRead(Quota(used_s=3600 * 4.5, allowed_s=72000), practice=False)
    assert quota_words(left) == "Kaggle TPU: 15.5 h of 20 h left this week"
    spent = QuotaRead(Quota(used_s=72000, allowed_s=72000), practice=True)
    assert quota_words(spent) == (
        "Kaggle TPU: used up this week (of 20 h) (the practice stand-in's figure)"
    )
