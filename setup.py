"""Build script for the optional C helper ``pidkit._speedups``; everything else is in pyproject.toml.

``optional=True``: without a C compiler or the Python headers the build of the extension fails with a
warning and pidkit installs as pure Python (``pidkit.llid.SPEEDUPS`` is then ``False``).
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("pidkit._speedups", ["src/pidkit/_speedups.c"], optional=True)])
