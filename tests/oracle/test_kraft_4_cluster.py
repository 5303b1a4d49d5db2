"""A Kafka 4.0.0 KRaft cluster's own logs (tests/fixtures/oracle/real/
kraft-4.0-isrlab-cluster-failovers, a cluster tools/real_cluster ran): read as KRaft mode,
although they hold the replica fetcher thread's ``[ReplicaFetcherThread-0-1]: Starting`` lines,
which every release writes in that form."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from isrlab.cli import cli

CASE = (Path(__file__).resolve().parents[1] / "fixtures" / "oracle" / "real"
        / "kraft-4.0-isrlab-cluster-failovers")


def test_a_kraft_4_cluster_log_with_fetcher_thread_lines_is_kraft_mode() -> None:
    logs = sorted(str(p) for p in CASE.rglob("*.log"))
    assert any("[ReplicaFetcherThread-0-1]: Starting" in Path(p).read_text() for p in logs)
    outcome = CliRunner().invoke(cli, ["validate", *logs])
    assert outcome.exit_code == 0, outcome.output
    assert "kafka: oracle-0: ACCEPTED" in outcome.output
    assert "kraft mode" in outcome.output, outcome.output
