"""StudyData reads a study's derived tables from the store: the batched read gives the frame
the per-run read gave (values, dtypes, row order)."""

from __future__ import annotations

import json
import types
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from ecnsim.studies._base import StudyData
from ecnsim.studies.hetero import HeteroStudy


class _Renamed(HeteroStudy):
    derived_renames = {"old": "new"}  # noqa: RUF012 - a class attribute, as a study sets it


def _table(**columns: object) -> pa.Table:
    return pa.Table.from_pandas(pd.DataFrame(columns), preserve_index=False)


def test_stacking_by_schema_gives_the_per_run_concatenation() -> None:
    data = StudyData(_Renamed(), types.SimpleNamespace(params={}), None)  # type: ignore[arg-type]
    tables = [
        _table(x=[1, 2], s=["a", "b"]),
        _table(x=[0.5, np.nan], s=["c", "d"]),  # float where the others are integers
        _table(x=pd.Series([], dtype="int64"), s=pd.Series([], dtype="str")),  # no rows
        _table(x=[3], s=["e"], old=[7.0]),  # a column stored under its earlier name
        _table(x=[4, 5, 6], s=["f", "g", "h"]),  # the first schema again, after others
        _table(new=[1.5], x=[9]),  # the new name, columns in another order, no s
        _table(x=[np.nan], s=[None]),  # all missing
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # pandas on empty/all-NA frames
        expected = pd.concat([data._renamed(t.to_pandas()) for t in tables], ignore_index=True)
        got = data._stacked(tables)
    assert sorted(got.columns) == sorted(expected.columns)
    pd.testing.assert_frame_equal(got.loc[:, list(expected.columns)], expected)
    assert list(got["x"].iloc[[0, 2, 4, 5, 7]]) == [1, 0.5, 3, 4, 6]


def test_one_schema_is_converted_once_in_the_runs_order() -> None:
    data = StudyData(HeteroStudy(), types.SimpleNamespace(params={}), None)  # type: ignore[arg-type]
    tables = [_table(x=[i, i + 100]) for i in range(5)]
    got = data._stacked(tables)
    assert got["x"].tolist() == [0, 100, 1, 101, 2, 102, 3, 103, 4, 104]
    assert isinstance(got.index, pd.RangeIndex)


@pytest.mark.parametrize("first", [0, 1])
def test_row_order_follows_the_runs_when_schemas_alternate(first: int) -> None:
    data = StudyData(HeteroStudy(), types.SimpleNamespace(params={}), None)  # type: ignore[arg-type]
    kinds = [_table(x=[1]), _table(x=[2.5])]
    tables = [kinds[(i + first) % 2] for i in range(6)]
    got = data._stacked(tables)
    assert got["x"].tolist() == [float(t["x"][0].as_py()) for t in tables]


def test_resolved_scenarios_are_written_in_order_skipping_unreadable_ones(tmp_path: Path) -> None:
    from ecnsim.studies.render import _Drawer, _write_scenarios

    sources = []
    for i in range(3):
        p = tmp_path / f"s{i}.json"
        if i != 1:  # the second has no file
            p.write_text(json.dumps({"name": f"point {i}", "n": i}), encoding="utf-8")
        sources.append(p)
    scenarios = tmp_path / "out" / "scenarios"
    scenarios.mkdir(parents=True)
    (scenarios / "point-0009.json").write_text("{}", encoding="utf-8")  # an earlier render's
    drawer = _Drawer(1)
    assert drawer.result(drawer.call(_write_scenarios, tmp_path / "out", sources)) == [0, 2]
    assert sorted(p.name for p in scenarios.iterdir()) == ["point-0001.json", "point-0002.json"]
    assert json.loads((scenarios / "point-0002.json").read_text(encoding="utf-8"))["n"] == 2
    assert (scenarios / "point-0001.json").read_text(encoding="utf-8").startswith('{\n "name"')


def test_drawer_draws_here_what_its_workers_cannot() -> None:
    from ecnsim.output.plot import _figure
    from ecnsim.studies.render import _draw, _Drawer

    def figures() -> dict[str, Any]:
        out = {}
        for k in range(2):
            fig = _figure(3.0, 2.0)
            fig.subplots().plot([0, 1], [k, 1 - k])
            out[f"f{k}"] = fig
        return out

    # (A figure drawn once is laid out: drawn again, its bytes can differ; hence new ones.)
    expected = {name: _draw(fig, False)[0] for name, fig in figures().items()}
    drawer = _Drawer(2)
    drawer.close()  # no worker processes: every figure is drawn in this process
    drawer.submit(figures(), False)
    drawings, cpu = drawer.drawings()
    assert drawings == expected
    assert cpu == 0.0


def test_tables_handed_over_by_the_runs_give_the_frames_a_read_of_the_store_gives(
    tmp_path: Path,
) -> None:
    """A study's runs hand their derived tables to the report as they are written
    (``StudyRun.arrived``): each is the table its stored file reads back as, the frames built
    from them equal the frames read from the store, and each is taken out once read."""
    import pyarrow.parquet as pq

    from ecnsim import studies

    study = HeteroStudy()
    params = studies.resolve_params(
        study,
        ["n_values=3", "max_p_values=0.1,0.5", "modes=RED,ECN", "duration_s=3", "warmup_s=1"],
        seeds=2,
    )
    run = studies.run_study(study, params, tmp_path, workers=2, render=False)
    store = run.sweep.store
    tasks = run.plan.tasks()
    assert run.sweep.ran == len(tasks) == 8
    names: set[str] = set()
    stored = 0
    for task in tasks:
        assert task.job is not None
        files = store.derived_files(task.key)[task.job.tag]
        for name, path in files.items():
            names.add(name)
            stored += 1
            arrived = run.arrived[(task.key, task.job.tag, name)]
            assert arrived.equals(pq.ParquetFile(path).read(), check_metadata=True)
    assert len(run.arrived) == stored
    assert stored > len(tasks)
    handed = StudyData(study, run.plan, store, arrived=run.arrived)
    read = StudyData(study, run.plan, store)
    for name in sorted(names):
        pd.testing.assert_frame_equal(handed.frame(name), read.frame(name))
    assert run.arrived == {}
    # A second call runs nothing and hands over nothing: the report reads the store.
    again = studies.run_study(study, params, tmp_path, workers=1, render=False)
    assert again.sweep.ran == 0
    assert again.arrived == {}
