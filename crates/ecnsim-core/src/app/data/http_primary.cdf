# ecnsim default HTTP primary (HTML) object size, bytes -> cumulative probability.
# Piecewise-linear CDF shaped after the description of Mah 1997 ("An Empirical
# Model of HTTP Network Traffic", INFOCOM 1997): heavy-tailed reply sizes with a
# median of about two 1460-byte segments (RFC 2415 §3 / STUDIES.md §2). These
# points are ecnsim's own approximation, not Mah's measured table.
100 0.0
500 0.08
1000 0.22
1800 0.38
2600 0.50
4000 0.62
6000 0.72
10000 0.82
20000 0.91
50000 0.965
100000 0.985
300000 0.996
1000000 1.0
