"""Z3 encodings of the Kafka models, for ``checker.z3``'s BMC, proofs and differential tests."""
