"""isrlab: Kafka's partition replication protocol as an executable, checkable specification."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("isrlab")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

