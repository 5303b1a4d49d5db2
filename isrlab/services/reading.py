"""What a reader of a counterexample needs beside it: a note when a violation is a known
finding of a model under Kafka's own code (so that it is not taken for a bug of the tool),
and a reading hint when a KRaft trace of the ``kafka`` model lowers values the model keeps
relative.  Shared by ``isrlab check``/``simulate`` and ``isrlab demo``."""

from __future__ import annotations

from collections.abc import Mapping

from isrlab.checker.report import CheckResult, Violation

KNOWN_FINDINGS = (
    ("kafka", "ReplicationQuorumSuperset",
     {"controller": "kraft", "make_leader_equal_epoch": "apply"},
     "Note: a known finding of the model in Kafka's KRaft code (every KRaft release, "
     "3.3-4.0; reproduced on a Kafka 4.0.0 cluster): the leader's replay of its own earlier "
     "ISR change drops its pending one (docs/findings/kraft-equal-epoch-delta.md, scenario "
     "equal-epoch-delta); "
     "-p make_leader_equal_epoch=skip is its candidate fix."),
)
"""(model, invariant, the parameters under which it breaks by Kafka's own code, the note a
run breaking it prints): a violation a newcomer meets under a model's defaults, pointed at
its write-up so that it is not mistaken for a bug of the model."""


_RENUMBERED = ("metadata_applied", "partition_epoch", "broker_epoch")
"""The kafka model's KRaft broker fields that its state compaction may lower."""


def renumbering_note(violation: Violation | None) -> str:
    """A reading hint when a KRaft trace of the kafka model lowers a broker's
    ``metadata_applied``, ``partition_epoch`` or ``broker_epoch`` at some step (the model
    folds the published metadata prefix away and renumbers epochs), ``""`` otherwise."""
    if violation is None:
        return ""
    for before, after in zip(violation.trace, violation.trace[1:], strict=False):
        for name, now in after.state.items():
            was = before.state.get(name)
            if not (name.startswith("broker") and isinstance(now, Mapping)
                    and isinstance(was, Mapping)):
                continue
            if any(isinstance(now.get(k), int) and isinstance(was.get(k), int)
                   and now[k] < was[k] for k in _RENUMBERED):
                return ("Reading it: metadata_applied, partition_epoch and broker epochs are "
                        "kept relative (the metadata every live broker has published is "
                        "folded away), so a step may lower them on brokers it does not touch; "
                        "docs/glossary.md, KRaft.")
    return ""


def known_finding(result: CheckResult) -> str:
    """The note of ``KNOWN_FINDINGS`` that ``result``'s violation is, ``""`` for none."""
    if result.violation is None:
        return ""
    for model, invariant, params, note in KNOWN_FINDINGS:
        if (result.model == model and result.violation.invariant == invariant
                and all(str(result.params.get(k)) == v for k, v in params.items())):
            return note
    return ""
