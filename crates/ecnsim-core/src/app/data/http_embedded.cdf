# ecnsim default HTTP embedded (inline) object size, bytes -> cumulative probability.
# Shaped after Mah 1997 (INFOCOM 1997): inline objects are smaller than primary
# pages, median within two 1460-byte segments (RFC 2415 §3 / STUDIES.md §2).
# ecnsim's own approximation, not Mah's measured table.
50 0.0
300 0.10
700 0.25
1200 0.40
1800 0.50
3000 0.62
5000 0.74
8000 0.83
15000 0.91
40000 0.97
100000 0.99
500000 0.999
1000000 1.0
