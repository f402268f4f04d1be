"""The notebooks in bindings/notebooks run from a clean kernel without error."""
import subprocess
import sys

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = ["quickstart.ipynb", "cluster-study.ipynb"]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_the_notebook_executes_and_its_checks_hold(source_dir, name):
    notebook = nbformat.read(source_dir / "bindings" / "notebooks" / name, as_version=4)
    # The kernel inherits this environment (PYTHONPATH with the built package) and runs in the
    # repository root; any error in a cell raises CellExecutionError here.
    client = NotebookClient(notebook, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(source_dir)}})
    client.execute()
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code)
    images = sum(1 for c in code for o in c.outputs if "image/png" in o.get("data", {}))
    assert images >= (4 if name == "quickstart.ipynb" else 3)  # every plot cell drew its figure
    # Cells that end in a check show its value: each must be True.
    checks = [o["data"]["text/plain"] for c in code for o in c.outputs
              if o.get("output_type") == "execute_result" and o["data"].get("text/plain") in ("True", "False")]
    assert checks and all(v == "True" for v in checks), checks


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_the_notebook_outside_the_repository_stops_with_a_clear_error(source_dir, name, tmp_path):
    """Its first cell looks for the repository upwards from where it runs: outside it, it must
    raise at once (it looped forever at the file system's root before)."""
    notebook = nbformat.read(source_dir / "bindings" / "notebooks" / name, as_version=4)
    first = next(c for c in notebook.cells if c.cell_type == "code")
    code = "\n".join(line for line in first.source.splitlines() if not line.startswith("%"))
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "FileNotFoundError" in result.stderr and "open this notebook inside the dlsim repository" in result.stderr
