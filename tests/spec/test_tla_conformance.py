"""The tla-* models against TLC's figures.

Golden numbers come from TLC 2.15 run on the public TLA+ specification only:

* configuration A and B rows: docs/conformance.md;
* the symmetry-reduced counts of configuration A and the single-invariant trace lengths
  were measured with the same TLC 2.15 on the same modules (``SYMMETRY Permutations(Replicas)``,
  ``-deadlock``, one worker; see docs/tla-models.md, "Verification against TLC").
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from isrlab.checker.bfs import CheckOptions, explore
from isrlab.checker.report import CheckResult
from isrlab.cli import cli
from isrlab.spec.tla import VERSIONS, TlaModel

CONFIG_A = (2, 2, 2, 2)  # replicas, log_size, max_records, max_leader_epoch
CONFIG_B = (3, 2, 2, 3)


def check(
    name: str, config: tuple[int, int, int, int], invariants: tuple[str, ...] = (),
    symmetry: bool = False,
) -> CheckResult:
    model = TlaModel(VERSIONS[name], *config, invariants=invariants)
    return explore(model, CheckOptions(symmetry=symmetry))


# -- configuration A: complete state spaces (docs/conformance.md) ---------------------------------
@pytest.mark.parametrize(
    ("name", "distinct", "generated", "diameter"),
    [
        ("tla-kip320", 5_973, 11_839, 18),
        ("tla-kip279", 9_027, 23_425, 18),
        ("tla-kip101", 9_045, 21_447, 18),
        ("tla-truncate-to-hw", 10_131, 24_459, 20),
    ],
)
def test_config_a_complete_space_matches_tlc(
    name: str, distinct: int, generated: int, diameter: int
) -> None:
    result = check(name, CONFIG_A)
    assert result.complete and result.violation is None
    assert (result.distinct_states, result.generated_states, result.diameter) == (
        distinct, generated, diameter,
    )


@pytest.mark.parametrize("name", ["tla-kip320", "tla-kip279"])
def test_config_a_fixed_versions_keep_weak_and_strong_isr(name: str) -> None:
    result = check(name, CONFIG_A, ("WeakIsr", "StrongIsr"))
    assert result.ok and result.complete


def test_config_a_kip101_first_violation_is_at_twelve_states() -> None:
    result = check("tla-kip101", CONFIG_A, ("WeakIsr", "StrongIsr"))
    assert result.violation is not None
    assert result.violation.length == 12


def test_config_a_kip101_violates_strong_isr_in_twelve_states() -> None:
    result = check("tla-kip101", CONFIG_A, ("StrongIsr",))
    assert result.violation is not None and result.violation.invariant == "StrongIsr"
    assert result.violation.length == 12


def test_config_a_truncate_to_hw_violates_weak_isr_in_nine_states() -> None:
    result = check("tla-truncate-to-hw", CONFIG_A, ("WeakIsr", "StrongIsr"))
    assert result.violation is not None and result.violation.invariant == "WeakIsr"
    assert result.violation.length == 9


def test_config_a_truncate_to_hw_violates_strong_isr_alone_in_ten_states() -> None:
    # TLC 2.15, INVARIANT StrongIsr only: trace of 10 states.
    result = check("tla-truncate-to-hw", CONFIG_A, ("StrongIsr",))
    assert result.violation is not None and result.violation.length == 10


# -- configuration A under symmetry (TLC 2.15 with SYMMETRY Permutations(Replicas)) -------------
@pytest.mark.parametrize(
    ("name", "distinct", "generated", "diameter"),
    [
        ("tla-kip320", 2_987, 5_922, 18),
        ("tla-kip279", 4_514, 11_715, 18),
        ("tla-kip101", 4_523, 10_726, 18),
        ("tla-truncate-to-hw", 5_066, 12_232, 20),
    ],
)
def test_config_a_symmetry_reduced_space_matches_tlc(
    name: str, distinct: int, generated: int, diameter: int
) -> None:
    result = check(name, CONFIG_A, symmetry=True)
    assert (result.distinct_states, result.generated_states, result.diameter) == (
        distinct, generated, diameter,
    )


# -- other constants (TLC 2.15 on the same modules, measured for these tests) -------------------
@pytest.mark.parametrize(
    ("name", "config", "distinct", "generated", "diameter"),
    [
        ("tla-truncate-to-hw", (2, 3, 2, 1), 1_251, 2_691, 16),
        ("tla-kip101", (2, 3, 2, 1), 1_177, 2_483, 15),
        ("tla-kip279", (2, 3, 2, 1), 1_177, 2_753, 15),
        ("tla-kip320", (2, 3, 2, 1), 957, 1_819, 15),
        ("tla-truncate-to-hw", (1, 3, 3, 1), 24, 40, 10),
        ("tla-kip101", (1, 3, 3, 1), 24, 40, 10),
        ("tla-kip279", (1, 3, 3, 1), 24, 40, 10),
        ("tla-kip320", (1, 3, 3, 1), 24, 40, 10),
        ("tla-kip320", (3, 1, 1, 2), 97_531, 241_543, 22),
    ],
)
def test_other_constants_match_tlc(
    name: str, config: tuple[int, int, int, int], distinct: int, generated: int, diameter: int
) -> None:
    result = check(name, config)
    assert (result.distinct_states, result.generated_states, result.diameter) == (
        distinct, generated, diameter,
    )


# -- configuration B: shortest counterexamples (docs/conformance.md) -----------------------------
def test_config_b_truncate_to_hw_violates_strong_isr_in_nine_states() -> None:
    result = check("tla-truncate-to-hw", CONFIG_B, ("StrongIsr",))
    assert result.violation is not None and result.violation.length == 9


@pytest.mark.slow
@pytest.mark.parametrize("name", ["tla-kip101", "tla-kip279"])
def test_config_b_kip101_and_kip279_violate_strong_isr_in_eleven_states(name: str) -> None:
    result = check(name, CONFIG_B, ("StrongIsr",))
    assert result.violation is not None and result.violation.length == 11


# -- the command line ------------------------------------------------------------------------------
def test_cli_check_of_config_a_kip320_reports_tlc_counts() -> None:
    result = CliRunner().invoke(cli, [
        "check", "--model", "tla-kip320", "-p", "replicas=2", "-p", "log_size=2",
        "-p", "max_records=2", "-p", "max_leader_epoch=2", "--no-progress",
    ])
    assert result.exit_code == 0, result.output
    assert "5,973 distinct" in result.output


def test_cli_rejects_an_unknown_invariant_in_one_line() -> None:
    result = CliRunner().invoke(cli, [
        "check", "--model", "tla-kip320", "-p", "invariants=Bogus", "--no-progress",
    ])
    assert result.exit_code == 2
    assert "Bogus" in result.output and "Traceback" not in result.output


def test_cli_rejects_constants_beyond_the_byte_layout_in_one_line() -> None:
    result = CliRunner().invoke(cli, [
        "check", "--model", "tla-kip320", "-p", "replicas=7", "--no-progress",
    ])
    assert result.exit_code == 2
    assert "replicas" in result.output


@pytest.mark.parametrize("name", sorted(VERSIONS))
def test_config_a_reaches_a_committed_record_and_a_second_leader_epoch(name: str) -> None:
    result = check(name, CONFIG_A)
    assert {s.name for s in result.sometimes if s.reached} == {
        "CommittedRecord", "SecondLeaderEpoch",
    }


def test_registry_builds_each_version_with_the_invariants_asked_for() -> None:
    from returns.result import Success

    from isrlab.models import registry

    for name in VERSIONS:
        entry = registry().get(name).unwrap()
        assert entry.symmetric
        params = registry().parse_params(entry, ["invariants=none"])
        assert isinstance(params, Success)
        assert list(entry.build(params.unwrap()).invariants()) == []
        params = registry().parse_params(entry, ["invariants=StrongIsr, TypeOk"])
        names = [p.name for p in entry.build(params.unwrap()).invariants()]
        assert names == ["StrongIsr", "TypeOk"]


@pytest.mark.parametrize("name", sorted(VERSIONS))
def test_config_a_every_reachable_state_is_type_correct(name: str) -> None:
    result = check(name, CONFIG_A, ("TypeOk",))
    assert result.ok and result.distinct_states > 5_000
