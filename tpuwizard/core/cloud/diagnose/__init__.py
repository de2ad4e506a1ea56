"""Any failure turned into a Diagnosis (what went wrong, in plain words, and what to do):
failure.py decides which applies; capacity, Compute Engine's refusals and the workers' own."""
