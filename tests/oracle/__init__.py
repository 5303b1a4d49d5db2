"""Tests of the reference oracle: trace validation, Kafka logs, differential testing."""
