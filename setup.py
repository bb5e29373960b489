"""Build script for the optional C helper ``pidkit._speedups``; everything else is in pyproject.toml.

Where the C helper can be compiled (a C compiler and the Python headers: tried first on a one-line
file that includes ``Python.h``), it is built into the wheel; where it cannot, the extension is left
out and the wheel is pure Python (``py3-none-any``), so it installs anywhere and ``pidkit.llid.SPEEDUPS``
is ``False`` there.  ``optional=True`` still turns a later failure of the real build into a warning.
"""

from __future__ import annotations

import os
import sysconfig
import tempfile

from setuptools import Extension, setup


def can_compile_extensions() -> bool:
    """True if the configured C compiler compiles a file that includes ``Python.h``."""
    from setuptools._distutils.ccompiler import new_compiler
    from setuptools._distutils.errors import CCompilerError, DistutilsExecError, DistutilsPlatformError
    from setuptools._distutils.sysconfig import customize_compiler

    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "probe.c")
        with open(source, "w", encoding="ascii") as f:
            f.write("#include <Python.h>\nint pidkit_probe(void) { return 0; }\n")
        try:
            compiler = new_compiler()
            customize_compiler(compiler)
            compiler.compile([source], output_dir=tmp, include_dirs=[sysconfig.get_paths()["include"]])
        except (CCompilerError, DistutilsExecError, DistutilsPlatformError, OSError):
            return False
    return True


EXTENSIONS = [Extension("pidkit._speedups", ["src/pidkit/_speedups.c"], optional=True)]

setup(ext_modules=EXTENSIONS if can_compile_extensions() else [])
