"""Kafka replication models built from ``core`` and the invariant catalogue."""
