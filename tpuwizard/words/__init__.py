"""What the front ends say: event lines, choices, tables and figures, in one room.

Below the wizard, plain mode and the commands, above the session; no user-interface library.
"""
