"""The notebook route's words and install (issue 27, item 14): how to upload the file, each step
once ("Run all" was said twice), and the same pinned jax[tpu] as the TPU VM."""

from __future__ import annotations

import pytest

from tpuwizard.core.evidence import notebook
from tpuwizard.core.remote.bootstrap import TESTED_JAX


@pytest.mark.parametrize(
    ("key", "upload"), [("colab", "File → Upload notebook"), ("kaggle", "File → Import Notebook")]
)
def test_the_steps_say_how_to_upload_and_run_every_cell_once(key, upload):
    steps = [notebook.plain(s) for s in notebook.walk_steps(notebook.get_platform(key))]
    assert upload in steps[0]
    assert sum("Run all" in s for s in steps) == 1


@pytest.mark.parametrize("key", ["colab", "kaggle"])
def test_the_notebook_installs_the_vm_s_pinned_jax(key):
    nb = notebook.build_notebook(key)
    source = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert f"JAX_REQUIREMENT = 'jax[tpu]=={TESTED_JAX}'" in source
    assert '"install", "-q", JAX_REQUIREMENT]' in source
    assert '"jax[tpu]"]' not in source  # never the unpinned requirement
