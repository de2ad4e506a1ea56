"""What tpuwizard made and may bill: the write-ahead ledger, ownership by labels, billing."""
