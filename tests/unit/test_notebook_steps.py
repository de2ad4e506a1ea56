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


def test_the_check_command_names_where_the_browser_saved_the_receipt():
    """The wizard's field says ~/Downloads/receipt.json; the printed step and the notebook's
    last cell say the same path, so the command runs as typed from any folder."""
    from tpuwizard.core.evidence import notebook

    for key in ("colab", "kaggle"):
        check = notebook.check_command(key)
        assert check.startswith("tpuwizard receipt check ~/Downloads/receipt.json --expect tpu")
        last = notebook.build_notebook(key).cells[-1].source
        assert "tpuwizard receipt check ~/Downloads/receipt.json" in last
