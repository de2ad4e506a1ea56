"""One launch from plan to verified end, and the parts it sequences."""
