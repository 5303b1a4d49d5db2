"""The ``kafka`` cluster model family: one partition on a few brokers, composed of ``core``.

``isrlab.spec.kafka.registration`` adds the model ``kafka`` to the registry; every feature and
protocol version is a parameter (``PARAMS``), so a researcher keeps the state space as small
as the question.
The defaults are the newest behaviour the model covers: KRaft's controller
(``controller=kraft``, Kafka 3.3+ and the only mode of 4.0; ``controller=zookeeper`` is
ZooKeeper mode), the broker rules of Kafka 2.1 and later (KIP-279 truncation with
KAFKA-7415, KIP-320's final fencing, KAFKA-7128's ISR rule, KAFKA-4485's lag rules,
KAFKA-7414's out-of-range truncation; unchanged through 4.0), the fetcher's truncation only
once a down leader answers (0.11+), KIP-497's AlterPartition and KIP-966's ELR (Kafka 4.0),
with clean elections and acks=all, on two brokers;
each known bug of ``docs/scenarios.md`` is found by turning one of them back to an older
version.  Each version parameter's help names the Kafka versions of each of its values.
The model itself is ``isrlab.spec.kafka.model``; its properties are ``isrlab.spec.invariants``.
"""
