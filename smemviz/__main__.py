"""``python -m smemviz``: the same command line as the ``smemviz`` script."""

from .cli import main

raise SystemExit(main())
