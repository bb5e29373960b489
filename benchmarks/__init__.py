"""pidkit benchmarks: each measures pidkit and its peer in the same run and reports the ratio."""
