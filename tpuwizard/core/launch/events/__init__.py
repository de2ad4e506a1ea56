"""The events a launch and a run on a kept node produce, their documentation and their fold."""
