"""The Textual wizard. Screens render state and forward intent; the work is in tpuwizard.core."""
