"""A spot run that resumes after preemption: its chain of attempts and its checkpoints' copy."""
