"""One launch: its plan, lifecycle events, billing state, ledger, multi-host joins, teardown."""
