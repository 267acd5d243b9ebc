"""``python -m kubesched``: the ``kubesched`` command, for environments without the script on PATH."""

from .cli.main import main

main()
