"""The docs run as written: the README's Python, the measurement page's example,
the tutorial notebook, and every path a documented command names (issue 15 items 9, 10)."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest

from .conftest import ROOT

DOCS = sorted(
    [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "validation").glob("*/README.md")]
)


def _blocks(path: Path, lang: str) -> list[str]:
    """The fenced code blocks of ``lang`` in a Markdown file."""
    text = path.read_text(encoding="utf-8")
    return re.findall(rf"^```{lang}\n(.*?)^```", text, flags=re.S | re.M)


def _run_python(code: str, cwd: Path) -> dict[str, object]:
    import matplotlib

    matplotlib.use("Agg")
    namespace: dict[str, object] = {"__name__": "__doc_example__"}
    old = Path.cwd()
    os.chdir(cwd)
    try:
        exec(compile(code, "<doc>", "exec"), namespace)
    finally:
        os.chdir(old)
    return namespace


def test_readme_python_example_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (block,) = [b for b in _blocks(ROOT / "README.md", "python") if "Simulation(" in b]
    ns = _run_python(block, tmp_path)
    out = capsys.readouterr().out
    assert "goodput_bps" in out
    assert "completion_time_s" in out
    flows = ns["results"].flows  # type: ignore[attr-defined]
    assert flows["bytes_delivered"].iloc[0] == 5_000_000


def test_measurement_example_runs(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    (block,) = [b for b in _blocks(ROOT / "docs" / "measurement.md", "python") if "scenario" in b][
        :1
    ]
    _run_python(block, tmp_path)
    assert (tmp_path / "cwnd.png").stat().st_size > 1000


def test_tutorial_notebook_executes(tmp_path: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(ROOT / "docs" / "tutorial.ipynb", as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), (
        "docs/tutorial.ipynb is kept without outputs"
    )
    client = nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert any("ecnsim Results" in h for h in html), "the Results view renders"
    assert sum("image/png" in o.get("data", {}) for o in outputs) >= 2, "two figures drawn"


# ---------------------------------------------------------------------------
# Commands in the docs
# ---------------------------------------------------------------------------

_PATH_RE = re.compile(r"^(examples|docs|validation|tests|python|crates)/[\w./*-]+$")


def _shell_lines(path: Path) -> list[str]:
    lines = []
    for block in _blocks(path, "sh") + _blocks(path, "") + _blocks(path, "bash"):
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            if line and not line.startswith("#"):
                lines.append(line)
    return lines


def test_docs_name_no_machine_paths() -> None:
    bad = []
    for doc in DOCS:
        for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"(?<![\w.])/(work|home|root|Users)/", line):
                bad.append(f"{doc.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not bad, "\n".join(bad)


def test_paths_in_documented_commands_exist_from_the_repository_root() -> None:
    missing = []
    for doc in DOCS:
        for line in _shell_lines(doc):
            try:
                words = shlex.split(line)
            except ValueError:
                continue
            for w in words:
                if _PATH_RE.match(w) and "*" not in w and not (ROOT / w).exists():
                    # Outputs the command writes (e.g. --plot docs/img/x.png) may not exist yet.
                    if (ROOT / w).parent.is_dir() and w.endswith((".png", ".svg", ".json")):
                        continue
                    missing.append(f"{doc.relative_to(ROOT)}: {w} (in `{line}`)")
    assert not missing, "\n".join(missing)
