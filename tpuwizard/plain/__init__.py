"""Plain mode: the wizard's questions as prompts (questionary), for terminals and screen readers."""
