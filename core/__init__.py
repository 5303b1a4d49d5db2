"""Pure, immutable transition functions of Kafka's partition replica management."""
