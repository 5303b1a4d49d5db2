"""Kafka replication models built from ``core`` and the invariant catalogue."""

from isrlab.spec import _compiled

_compiled.install()  # before any compiled module is imported: isrlab.spec._compiled
