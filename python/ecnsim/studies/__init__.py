"""The reference studies of ``docs/studies/STUDIES.md`` as code: ``ecnsim study run NAME``.

Each module defines one :class:`~ecnsim.studies._base.Study`: its parameters
(a typed dataclass with the source's values), the scenario of one point, the
grid, the metrics of one run, and the tables and figures laid out as the
source lays them out. ``docs/studies/NAME.md`` describes each.

::

    from ecnsim import studies

    study = studies.get("hetero")
    params = studies.resolve_params(study, ["variant=icn2001", "n_values=[30, 60]"], quick=True)
    run = studies.run_study(study, params, "out/hetero", workers=2)
    print(run.report)

A new study is a module with a ``Study`` subclass registered in :data:`STUDIES`.
"""

from __future__ import annotations

import importlib

from ecnsim.studies._base import (
    Calibration,
    Choice,
    JobSpec,
    Study,
    StudyData,
    StudyError,
    StudyParams,
    StudyRun,
    StudyTable,
    calibrate_study,
    estimate_wall_s,
    filter_points,
    parse_only,
    plan_study,
    resolve_params,
    run_study,
)

__all__ = [
    "STUDIES",
    "Calibration",
    "Choice",
    "JobSpec",
    "Study",
    "StudyData",
    "StudyError",
    "StudyParams",
    "StudyRun",
    "StudyTable",
    "calibrate_study",
    "estimate_wall_s",
    "filter_points",
    "get",
    "names",
    "parse_only",
    "plan_study",
    "resolve_params",
    "run_study",
]

#: Study name -> ``"module:Class"``; modules are imported when a study is asked for.
STUDIES: dict[str, str] = {
    "hetero": "ecnsim.studies.hetero:HeteroStudy",
    "aecn": "ecnsim.studies.aecn:AecnStudy",
    "ecnplus": "ecnsim.studies.ecnplus:EcnplusStudy",
    "rfc2415": "ecnsim.studies.rfc2415:Rfc2415Study",
    "rfc2884": "ecnsim.studies.rfc2884:Rfc2884Study",
    "dctcp": "ecnsim.studies.dctcp:DctcpStudy",
}


def names() -> list[str]:
    """The registered studies' names, in registry order."""
    return list(STUDIES)


def get(name: str) -> Study:
    """The study called ``name``; :class:`StudyError` lists the known ones otherwise."""
    try:
        target = STUDIES[name]
    except KeyError:
        raise StudyError(f"unknown study {name!r}; studies: {', '.join(STUDIES)}") from None
    module_name, _, cls_name = target.partition(":")
    cls = getattr(importlib.import_module(module_name), cls_name)
    study: Study = cls()
    return study
