"""Output formats: figures (:mod:`~ecnsim.output.plot`, matplotlib), HTML reports
(:mod:`~ecnsim.output.report`), and packet traces in the ns-2 and pcap formats
(:mod:`~ecnsim.output.trace`). Each module is imported on first use, so that
running a simulation never pays for matplotlib."""
