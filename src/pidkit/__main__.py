"""``python -m pidkit`` runs the ``pidkit`` command line."""

from pidkit.cli.main import entry

if __name__ == "__main__":
    entry()
