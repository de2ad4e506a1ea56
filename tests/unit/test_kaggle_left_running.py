"""What the wizard's quit guard says of a kernel its run pushed: the ledger's record, in the
words `status` uses (its page, and until when Kaggle lets it run); nothing once its end is
recorded, or before anything was pushed."""

from __future__ import annotations

import time
from types import SimpleNamespace

from tpuwizard.core.kaggle.run import prepare_run
from tpuwizard.session.free.kaggle import KaggleRoute
from tpuwizard.words.kaggle_text import held_lines


def route(tmp_path) -> KaggleRoute:
    script = tmp_path / "main.py"
    script.write_text("print(1)\n")
    run = prepare_run(script, (), (), 30, "TpuV5E8", "r1", tmp_path / "runs" / "r1", False)
    return KaggleRoute(False, run)


def test_a_pushed_kernel_is_named_with_its_page_and_until_when_it_may_run(tmp_path):
    r = route(tmp_path)
    assert r.left_running("QUEUED") is None  # not signed in: nothing pushed
    r.kernels = SimpleNamespace(username="ada")  # type: ignore[assignment]
    assert r.left_running("QUEUED") is None  # signed in, nothing recorded yet
    ref, url, ends_by = "ada/tpuwizard-r1", "https://www.kaggle.com/code/ada/tpuwizard-r1", 4e9
    r.ledger.record("intent", ref, "r1", timeout_s=1800, practice=False, pid=1)
    r.ledger.record("pushed", ref, "r1", url=url, ends_by=ends_by)
    seen = r.left_running("RUNNING")
    assert seen is not None and seen.may_run and not seen.record.practice
    [line] = held_lines(seen)
    until = time.strftime("%Y-%m-%d %H:%M", time.localtime(ends_by))
    assert line.startswith(f"{ref}: RUNNING on Kaggle, left running until about {until}")
    assert line.endswith(f"stop it on its page: {url}")
    r.ledger.record("ended", ref, "r1", state="COMPLETE")
    assert r.left_running("COMPLETE") is None
