"""Where the Colab sessions' ledger lives: the Kaggle ledger's format
(:class:`~tpuwizard.core.kaggle.ledger.KernelLedger`, a session's name as its ``kernel``), in
its own file in tpuwizard's state folder. Apart, so that ``status`` and ``teardown`` can tell
that Colab was never used without loading Colab's machinery."""

LEDGER_FILE = "colab-ledger.jsonl"
