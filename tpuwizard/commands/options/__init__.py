"""The command line's option groups: each one decorator that declares a part's options and hands
the command the part built from them (issue 53). Empty on purpose: a command imports only the
groups it takes, so ``fit``'s start never loads ``launch``'s."""
