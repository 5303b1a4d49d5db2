"""``isrlab demo --scenario KEY`` (issue 34, finding 8): only that scenario, and its commands
in the parameters' current spelling."""

from __future__ import annotations

import re

from click.testing import CliRunner

from isrlab.cli import cli
from isrlab.models import registry


def test_demo_scenario_runs_only_that_scenario_in_current_spelling() -> None:
    result = CliRunner().invoke(cli, ["demo", "--scenario", "kip320"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "worked examples" not in out and "[ok]" not in out
    assert out.lstrip().startswith("== ")
    commands = [line for line in out.splitlines() if line.startswith("$ isrlab check")]
    assert len(commands) == 2
    aliases = {(p.name, alias) for p in registry().entries["kafka"].params
               for alias, _ in p.aliases}
    used = set(re.findall(r"-p (\w+)=(\S+)", " ".join(commands)))
    assert aliases and not used & aliases  # no deprecated spelling, e.g. fetch_fencing=true
    assert "-p fetch_fencing=final" in " ".join(commands)


def test_demo_names_what_differs_between_the_versions_and_what_to_run_next() -> None:
    """The two commands differ only in the version's parameters, which a reader would
    otherwise find by comparing two lines of 20 parameters each."""
    result = CliRunner().invoke(cli, ["demo", "--scenario", "last-replica-standing"])
    assert result.exit_code == 0, result.output
    heads = [line for line in result.stdout.splitlines() if line.startswith("== ")]
    assert heads[0].endswith("the buggy protocol version (-p elr=false -p "
                              "unclean_detection=none)")
    assert heads[1] == ("== the fixing version, same bounds (-p elr=true -p "
                        "unclean_detection=previous-epoch)")
    after = result.stdout.split("\nNext:\n", 1)[1]
    assert "isrlab demo --scenario list" in after and "isrlab explore --trace" in after


def test_a_kraft_trace_whose_epochs_drop_says_how_to_read_it() -> None:
    """KAFKA-14139's trace lowers broker1's broker_epoch 1 -> 0 at HandleCommit(0,2) (the
    model renumbers): the demo says so under the trace; KIP-101's (ZooKeeper) has no note."""
    kraft = CliRunner().invoke(cli, ["demo", "--scenario", "kafka14139"])
    assert kraft.exit_code == 0, kraft.output
    assert "broker1['broker_epoch'] = 0" in kraft.stdout
    assert kraft.stdout.count("Reading it: metadata_applied, partition_epoch and broker "
                              "epochs are kept relative") == 1
    zk = CliRunner().invoke(cli, ["demo", "--scenario", "kip101-1"])
    assert zk.exit_code == 0 and "Reading it" not in zk.stdout
