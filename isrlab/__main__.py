"""The ``isrlab`` command: ``python -m isrlab`` and the installed ``isrlab`` script."""

import sys


def main() -> None:
    """Run ``isrlab.cli.main``, with Ctrl-C while its modules are still loading reported as
    every later Ctrl-C is: ``isrlab: interrupted``, exit 130.  The import is here, not in
    ``isrlab/__init__.py``, so the root package imports no isrlab module (tests/test_layers.py)."""
    try:
        from isrlab.cli import main as run
    except KeyboardInterrupt:
        sys.stderr.write("isrlab: interrupted\n")
        raise SystemExit(130) from None
    run()


if __name__ == "__main__":
    main()
