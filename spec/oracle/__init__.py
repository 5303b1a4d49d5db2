"""The Kafka log oracle: a cluster's broker logs judged, line by line, against the rules of
Kafka's code (``rules``), on an abstract per-partition cluster state with unbounded
integers (``judge``), read as a stream (``run``); ``cluster`` holds the abstract state's
"jump" steps, each a sequence of the ``kafka`` model's steps (tests/oracle/test_jumps.py).
docs/oracle.md describes the verdicts and every rule."""

from isrlab.spec.oracle.judge import JudgeOptions, PartitionJudge
from isrlab.spec.oracle.rules import RULES, Rule
from isrlab.spec.oracle.run import EXIT, OracleOptions, Verdict, judge_logs, worst

__all__ = ["EXIT", "RULES", "JudgeOptions", "OracleOptions", "PartitionJudge", "Rule",
           "Verdict", "judge_logs", "worst"]
