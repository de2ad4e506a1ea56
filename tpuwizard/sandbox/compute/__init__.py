"""Compute Engine's stand-in: its REST routes and batch endpoint, its list filter, how Google's
Compute Engine behaves (google.py), TPU VM instances and what an insert must hold, a slice's
regional parts and zonal MIGs with their resize requests, public images, zonal operations."""
