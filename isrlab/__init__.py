"""isrlab: Kafka's partition replication protocol as an executable, checkable specification."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("isrlab")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"


def main() -> None:
    """The ``isrlab`` command (``isrlab.cli.main``), with Ctrl-C while its modules are still
    loading reported as every later Ctrl-C is: ``isrlab: interrupted``, exit 130."""
    import sys

    try:
        from isrlab.cli import main as run
    except KeyboardInterrupt:
        sys.stderr.write("isrlab: interrupted\n")
        raise SystemExit(130) from None
    run()
