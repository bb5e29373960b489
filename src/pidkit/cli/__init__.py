"""The ``pidkit`` command line: thin wrappers over the library (see :mod:`pidkit.cli.main`)."""
