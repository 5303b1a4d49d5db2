"""``python -m isrlab``: the ``isrlab`` command (``isrlab.main``)."""

from isrlab import main

main()
