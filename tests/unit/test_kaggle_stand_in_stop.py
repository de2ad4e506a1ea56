"""The Kaggle stand-in's kernels end with it: a push answered after it stopped (a slow_push
handler still sleeping) runs no kernel, so no process and no thread outlives the stand-in."""

from __future__ import annotations

import threading

from tpuwizard.sandbox.kaggle.sessions import KernelSessions


def test_a_push_after_the_stand_in_stopped_runs_no_kernel(tmp_path):
    sessions = KernelSessions(tmp_path, {})
    sessions.stop_all()
    threads_before = threading.active_count()
    session = sessions.push("ada/tpuwizard-r1", "print('never')", 600, "TpuV5E8")
    assert session.ended.is_set() and session.process is None
    assert threading.active_count() == threads_before  # no thread started for it


def test_a_stop_as_the_kernel_starts_leaves_no_process(tmp_path, monkeypatch):
    from tpuwizard.sandbox.kaggle import sessions as kaggle_sessions

    sessions = KernelSessions(tmp_path, {"queue": "0"})
    environment = kaggle_sessions.cpu_device_env

    def stopped_meanwhile(*args, **kwargs):  # the stand-in stops between the queue and start
        sessions.stop_all()
        return environment(*args, **kwargs)

    monkeypatch.setattr(kaggle_sessions, "cpu_device_env", stopped_meanwhile)
    monkeypatch.setattr(threading.Thread, "start", lambda self: None)  # run it here instead
    session = sessions.push("ada/tpuwizard-r1", "print('started')", 600, "TpuV5E8")
    sessions._run(session)
    started = session.process
    assert started is None and session.ended.is_set()  # else a kernel no stop would end
