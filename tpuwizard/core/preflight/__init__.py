"""The preflight: before anything is created, find what would refuse the TPU (issue 25).

Each check is a :class:`~tpuwizard.core.preflight.model.Check`: PASS, FAIL with the one command
that fixes it, or UNKNOWN with why (and, where a command would let it run, that command). The
checks run concurrently, each with a timeout, and none raises (:mod:`model`). They talk to
Google's REST APIs through google-auth's ``AuthorizedSession`` (:mod:`rest`), pointed at the
practice sandbox in practice. Read-only: a fix is printed, never applied.
"""
