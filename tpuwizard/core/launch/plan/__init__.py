"""The launch plan and every rule it must satisfy before any cloud call."""
