"""The one way from a person's answers to a launch: the stages before create, in one order
(outcomes.py names them and what each answers; stages.py holds their rules; pipeline.py runs
them for the Session, for a walk's look ahead and for Review's preview)."""
