"""``python -m ecnsim`` is the ``ecnsim`` command."""

from ecnsim.cli import main

raise SystemExit(main())
