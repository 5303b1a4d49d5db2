"""A generic explicit-state breadth-first model checker and Z3 encodings; knows nothing of Kafka."""
