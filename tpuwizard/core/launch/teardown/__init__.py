"""Verified teardown, the survey of what may still bill, and the commands to do it by hand."""
