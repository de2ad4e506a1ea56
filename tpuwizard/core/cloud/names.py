"""Google's rules for the names tpuwizard puts into API paths: a project id, a zone, a node.

Apart from gcloud_config (which checks what the user typed against them) so that reading the
ledger back, which every command does while a node is kept, imports nothing more (issue 38:
``fit 48 --json`` with a kept node at most 3x a bare Python).
"""

from __future__ import annotations

import re

# Google's rule for a project id, Cloud Resource Manager v3 Project.projectId: "6 to 30 lowercase
# ASCII letters, digits, or hyphens. It must start with a letter. Trailing hyphens are
# prohibited." (reference/ does not state it). Checked before any call, since the id is put
# into every API path, the ledger and the shell commands said back to the user.
PROJECT_RE = re.compile(r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$")
# A zone is a region and a letter (us-central1-a), or an AI zone (us-central1-ai1a, us-central1-ai1;
# reference/google-behaviour.md, Zones).
ZONE_RE = re.compile(r"^[a-z]+-[a-z]+[0-9]+-([a-z]|ai[0-9]+[a-z]?)$")
NAME_RE = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")
