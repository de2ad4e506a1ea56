"""The Kaggle route's events in words (event_text.describe hands them here)."""

from __future__ import annotations

import time

from tpuwizard.core.launch.events.kaggle import (
    KernelDeleted,
    KernelLeftRunning,
    KernelPlanned,
    KernelPushed,
    KernelState,
)

KaggleEvent = KernelPlanned | KernelPushed | KernelState | KernelLeftRunning | KernelDeleted


def kaggle_lines(event: KaggleEvent) -> list[str]:
    match event:
        case KernelPlanned():
            practice = "[practice] " if event.practice else ""
            quota = (
                "TPU quota left this week: not given by Kaggle"
                if event.quota_left_s is None
                else f"TPU quota left this week: {event.quota_left_s / 3600:.1f} h"
            )
            return [
                f"{practice}Pushing {event.kernel} to Kaggle: private, {event.shape}, session "
                f"limit {event.max_run_minutes:g} min (Kaggle ends it then, even if this computer "
                f"is off), receipt expected on {event.expect}. {quota}. Run {event.run_id}."
            ]
        case KernelPushed():
            version = f" (version {event.version})" if event.version is not None else ""
            if event.found_after_lost_answer:
                return [
                    f"Kaggle's answer to the push was lost; {event.kernel} was found by its name, "
                    "so it was not pushed again. It stays in your Kaggle account as this run's "
                    "record."
                ]
            return [
                f"Pushed {event.kernel}{version}: {event.url}. It stays in your Kaggle account as "
                "this run's record."
            ]
        case KernelState():
            return [
                f"  Kaggle: {event.state} after {event.elapsed_s:.0f} s "
                f"(session limit {event.limit_s / 60:g} min)"
            ]
        case KernelLeftRunning():
            if event.practice:
                return [
                    f"[practice] {event.kernel} was {event.state}: the stand-in ends with this "
                    "command, and the kernel with it. On Kaggle it would keep running: Kaggle's "
                    "public API gives no session id to cancel."
                ]
            until = time.strftime("%H:%M", time.localtime(event.ends_by))
            return [
                f"{event.kernel} is still {event.state} on Kaggle and could not be cancelled from "
                "here: Kaggle's public API gives no session id to cancel "
                "(https://github.com/Kaggle/kaggle-cli/pull/1174). Kaggle ends it by about "
                f"{until} (its session limit); until then it spends your weekly TPU quota. Stop "
                f"it sooner on its page: {event.url}"
            ]
        case KernelDeleted():
            if event.verified:
                return [f"Deleted {event.kernel} from your Kaggle account (--delete-kernel)."]
            return [
                f"{event.kernel} was NOT verified deleted: {event.detail}. It costs nothing; "
                "delete it on its page on kaggle.com if you wish."
            ]
    return []
