"""The hand-over: the same plan, written for the engine a user moves to when one slice is not
enough (xpk, a JobSet for GKE, a SkyPilot task). It only writes text; nothing here calls a cloud."""
