#!/usr/bin/env python3
"""tpu_watchdog: delete this TPU node when its deadline passes, even if the laptop is gone.

Standalone (standard library only, Python 3.10+): tpuwizard uploads it to worker 0 and starts it
detached when a launch asks for a watchdog. At the deadline it calls the Cloud TPU API's delete
for its own node, authenticated as the VM's service account (a token from the metadata server),
and keeps retrying until the API accepts; then it reads the node back until the API answers 404
(a 200 on DELETE only means the delete was accepted).

    python3 tpu_watchdog.py --resource projects/P/locations/Z/nodes/N --deadline 1767225600
    python3 tpu_watchdog.py --resource ... --check-only   # may this VM delete it?
    python3 tpu_watchdog.py --resource ... --deadline T --idle-seconds 1800 --heartbeat FILE

With ``--idle-seconds`` the node is also deleted once ``FILE`` (touched by every ``tpuwizard run``,
``watch`` and ``ssh``, and by the open wizard) has not changed for that long: a kept node whose
laptop slept or crashed costs at most the idle time. A missing heartbeat file counts from the
watchdog's own start.

A spot node that came through a queued resource is deleted through that request
(``.../queuedResources/Q``, with force), which takes the node with it.

Losing the API: on Google, API calls that get no answer never end the wait before the deadline
(an outage passes, and the node must still go at its deadline); past the deadline the delete is
retried until the API has not answered for ``--give-up-after`` seconds (default a day), counted
from the later of its last answer and the deadline; then it reports ``gave_up`` and exits 4. It
cannot delete anything without the API, and a process that can never finish should end and say
so. In practice the "VM" is a process on the user's computer and an API that does not answer is
a practice cloud that was switched off: ``--give-up-before-deadline`` counts from the last answer
in every phase, so it ends soon after, whatever its deadline.

Every report is a line ``TPUWIZARD {json}`` with ``"kind": "watchdog"`` and when it was said
(``"at"``, seconds since the epoch): armed (with its deadline), each error, a change in how the
API answers its looks while it waits (an error, then answering again: said once, not at every
look), the delete accepted, deleted, or given up. Its requests name it (``User-Agent``), so the
API's side can tell its calls from others'.
"""

import argparse
import http.client
import json
import os
import sys
import time
import urllib.error
import urllib.request

MARKER = "TPUWIZARD "
METADATA_TOKEN = (
    "http://metadata.google.internal/computeMetadata/v1/instance/service-accounts/default/token"
)


USER_AGENT = "tpu_watchdog/1"


# What one call can fail with short of an HTTP status: no connection, a timeout, an answer cut
# short (a connection closed after the headers: IncompleteRead; before the status line:
# BadStatusLine), a body that is not JSON. Each is one failed attempt, tried again: none may end
# the watchdog (an answer cut short, as a server going away can cut it, raised IncompleteRead,
# which nothing caught: the watchdog died, and nothing deleted the node at its deadline).
CALL_FAILED = (urllib.error.URLError, OSError, ValueError, http.client.HTTPException)


def report(**payload):
    said = dict(kind="watchdog", at=round(time.time(), 2), **payload)
    print(MARKER + json.dumps(said, sort_keys=True), flush=True)


def token(source):
    if source == "none":
        return None
    if source.startswith("file:"):  # the practice sandbox's stand-in for the metadata server
        with open(source[len("file:") :]) as f:
            return f.read().strip()
    request = urllib.request.Request(METADATA_TOKEN, headers={"Metadata-Flavor": "Google"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)["access_token"]


def call(method, url, source, body=None):
    headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT}
    bearer = token(source)
    if bearer:
        headers["Authorization"] = "Bearer " + bearer
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read() or b"{}")


def needed(resource):
    kind = "queuedResources" if "/queuedResources/" in resource else "nodes"
    return ["tpu.%s.delete" % kind, "tpu.%s.get" % kind]


def missing_permissions(args):
    """The permissions this VM's service account lacks to delete its own resource."""
    project = args.resource.split("/")[1]
    wanted = needed(args.resource)
    answer = call(
        "POST",
        "%s/v1/projects/%s:testIamPermissions" % (args.iam_endpoint, project),
        args.token,
        {"permissions": wanted},
    )
    granted = set(answer.get("permissions", []))
    return [p for p in wanted if p not in granted]


def answered(args, method, url, body=None):
    """``call`` that notes when the API last answered (any HTTP status is an answer)."""
    try:
        result = call(method, url, args.token, body)
    except urllib.error.HTTPError:
        args.last_answer = time.time()
        raise
    args.last_answer = time.time()
    return result


def lost_api(args, now):
    """True once the API has not answered for ``--give-up-after`` seconds, counted from the later
    of its last answer and the deadline (from the last answer alone with
    ``--give-up-before-deadline``)."""
    if not args.give_up_after or args.deadline is None:
        return False
    since = args.last_answer
    if not args.give_up_before_deadline:
        since = max(since, args.deadline)
    return now - since >= args.give_up_after


def delete_resource(args):
    """True once the API accepted the delete (or the resource was already gone)."""
    force = "?force=true" if "/queuedResources/" in args.resource else ""
    try:
        answered(args, "DELETE", "%s/v2/%s%s" % (args.endpoint, args.resource, force))
        return True
    except urllib.error.HTTPError as err:
        if err.code == 404:
            return True
        report(ok=False, action="delete", error="HTTP %d" % err.code)
    except CALL_FAILED as err:
        report(ok=False, action="delete", error=failure(err))
    return False


def gone(args):
    """True when the API answers 404 for the resource; False while it is still there."""
    try:
        answered(args, "GET", "%s/v2/%s" % (args.endpoint, args.resource))
    except urllib.error.HTTPError as err:
        if err.code == 404:
            return True
        report(ok=False, action="confirm", error="HTTP %d" % err.code)
    except CALL_FAILED as err:
        report(ok=False, action="confirm", error=failure(err))
    return False


def wait_until_gone(args):
    """A 200 on DELETE means Google accepted the delete, not that the resource is gone: read it
    back until the API says 404, asking for the delete again if it reappears undeleted. False
    when the API stopped answering for good (:func:`lost_api`)."""
    waited = 0.0
    step = min(args.retry, 5.0)
    while not gone(args):
        if lost_api(args, time.time()):
            return False
        time.sleep(step)
        waited += step
        if waited >= args.retry * 10:  # a delete operation that failed leaves it there: again
            delete_resource(args)
            waited = 0.0
    return True


def idle_since(heartbeat, started):
    """When the last heartbeat arrived (the file's mtime), or the watchdog's start."""
    try:
        return max(os.stat(heartbeat).st_mtime, started)
    except OSError:
        return started


def wait_for_ending(args, started, gone=None):
    """Sleep until the deadline or the idle limit; returns which one ended the wait, or "gone"
    when ``gone()`` says the resource was torn down before either (the work is done then)."""
    last_look = started
    while True:
        now = time.time()
        if gone is not None and now - last_look >= args.retry:  # one read per retry interval
            last_look = now
            if gone():
                return "gone"
        if lost_api(args, now):  # only with --give-up-before-deadline: see the module's words
            return "lost"
        if now >= args.deadline:
            return "deadline"
        wake = args.deadline
        if args.idle_seconds:
            idle_end = idle_since(args.heartbeat, started) + args.idle_seconds
            if now >= idle_end:
                return "idle"
            wake = min(wake, idle_end)
        # Heartbeats move the idle end later, so look again at least every few seconds.
        time.sleep(min(args.retry, 5.0, max(0.1, wake - now)))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="tpu_watchdog", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--resource", required=True, help="projects/P/locations/Z/nodes/N or .../queuedResources/Q"
    )
    parser.add_argument("--deadline", type=float, help="seconds since the epoch")
    parser.add_argument("--endpoint", default="https://tpu.googleapis.com")
    parser.add_argument("--iam-endpoint", default="https://cloudresourcemanager.googleapis.com")
    parser.add_argument(
        "--token",
        default="metadata",
        help="where the bearer token comes from: metadata (a Cloud TPU VM), none, or "
        "file:PATH (the practice sandbox)",
    )
    parser.add_argument("--retry", type=float, default=30.0, help="seconds between attempts")
    parser.add_argument("--check-only", action="store_true")
    parser.add_argument(
        "--idle-seconds", type=float, default=0.0, help="delete after this long without a heartbeat"
    )
    parser.add_argument("--heartbeat", default=".tpuwizard/heartbeat", help="the heartbeat file")
    parser.add_argument(
        "--give-up-after",
        type=float,
        default=86400.0,
        help="stop once the API has not answered for this long past the deadline (0: never)",
    )
    parser.add_argument(
        "--give-up-before-deadline",
        action="store_true",
        help="count an API that does not answer before the deadline too (the practice sandbox)",
    )
    args = parser.parse_args(argv)
    parts = args.resource.split("/")
    if len(parts) != 6 or parts[4] not in ("nodes", "queuedResources"):
        parser.error("--resource must look like projects/P/locations/Z/nodes/N")
    if args.deadline is None and not args.check_only:
        parser.error("--deadline is required unless --check-only")
    args.last_answer = time.time()
    missing = checked(args)
    if missing is None:
        return 3
    if missing:
        report(ok=False, action="check", missing=missing)
        return 3
    report(ok=True, action="check")
    if args.check_only:
        return 0
    started = args.last_answer = time.time()  # the check just answered
    report(ok=True, action="armed", deadline=args.deadline, idle_seconds=args.idle_seconds)
    why = wait_for_ending(args, started, gone=lambda: already_gone(args))
    if why == "gone":
        report(ok=True, action="gone", resource=args.resource)
        return 0
    while why != "lost" and not delete_resource(args):
        if already_gone(args):  # deleted by someone else meanwhile: nothing left to guard
            break
        if lost_api(args, time.time()):
            why = "lost"
        else:
            time.sleep(args.retry)
    if why != "lost":
        report(ok=True, action="delete_accepted", resource=args.resource, reason=why)
        if wait_until_gone(args):
            report(ok=True, action="deleted", resource=args.resource, reason=why)
            return 0
    report(
        ok=False,
        action="gave_up",
        resource=args.resource,
        error="the API has not answered for %.0f s" % (time.time() - args.last_answer),
    )
    return 4


def checked(args):
    """The permissions missing to delete (empty: none), or None when the check got no answer.
    Started to guard (not ``--check-only``), an API that does not answer the check is asked
    again, as every later call is: the launch's own check just answered, and a watchdog that
    ended on one lost answer would guard nothing while the launch says it is armed. An HTTP
    error is the API's answer: it ends the check either way."""
    while True:
        try:
            return missing_permissions(args)
        except urllib.error.HTTPError as err:
            report(ok=False, action="check", error=str(err))
            return None
        except CALL_FAILED as err:
            report(ok=False, action="check", error=failure(err))
            if args.check_only or lost_api(args, time.time()):
                return None
        time.sleep(args.retry)


def failure(err):
    """A failed call in words: its class too, where its text alone says little (IncompleteRead
    gives only byte counts)."""
    text, name = str(err), type(err).__name__
    if isinstance(err, http.client.HTTPException) and not text.startswith(name):
        return "%s: %s" % (name, text) if text else name
    return text


def already_gone(args):
    """True when the API says the resource no longer exists (404 on a read)."""
    try:
        answered(args, "GET", "%s/v2/%s" % (args.endpoint, args.resource))
    except urllib.error.HTTPError as err:
        if err.code == 404:
            return True
        note_look(args, "HTTP %d" % err.code)
        return False
    except CALL_FAILED as err:
        note_look(args, failure(err))
        return False
    note_look(args, None)
    return False


def note_look(args, error):
    """Say how the API answered a look (``error``, or None: it answered) when that differs from
    the last look's: a refused token or an API gone quiet shows in the log when it starts and
    when it ends, not once per look."""
    if error == getattr(args, "look_error", None):
        return
    args.look_error = error
    if error is None:
        report(ok=True, action="look", answered=True)
    else:
        report(ok=False, action="look", error=error)


if __name__ == "__main__":
    sys.exit(main())
