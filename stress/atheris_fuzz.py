"""Coverage-guided fuzzing of one target of :mod:`stress.targets` with atheris (libFuzzer).

Usage: ``python stress/atheris_fuzz.py TARGET -runs=N -max_total_time=S -max_len=L``.  Any exception
other than a :mod:`pidkit.errors` type is a crash (non-zero exit, the input saved by libFuzzer).  At
end libFuzzer prints ``Done N runs in S second(s)``, which the test reads to report the inputs tried.
"""

from __future__ import annotations

import sys
from pathlib import Path

import atheris  # type: ignore[import-untyped]

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

with atheris.instrument_imports(include=["pidkit"]):
    import pidkit
    import pidkit.gedcom.reader
    import pidkit.llid  # noqa: F401

from stress.targets import call


def _one(data: bytes) -> None:
    call(TARGET, data)


if __name__ == "__main__":
    TARGET = sys.argv.pop(1)
    atheris.Setup(sys.argv, _one)
    atheris.Fuzz()
