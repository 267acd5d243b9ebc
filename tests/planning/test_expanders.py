"""cluster-autoscaler's expanders over expansion options, their chain, and the priority
expander's configuration file."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.planning.expanders import (
    ExpanderError,
    Option,
    choose,
    parse_expanders,
    parse_priorities,
    price_per_pod,
    read_priorities,
    waste,
)

GI = 2**30


def option(pool: str, nodes: int = 1, pods: int = 1, cpu: int = 1000, memory: int = GI, node_cpu: int = 4000,
           node_memory: int = 16 * GI, price: float | None = None) -> Option:
    return Option(pool, nodes, pods, cpu, memory, node_cpu, node_memory, price)


def test_waste_is_the_unused_share_of_cpu_plus_the_unused_share_of_memory():
    # 2 nodes of 4 cpu / 16Gi, pods asking 6 cpu / 8Gi: 2/8 + 24/32
    assert waste(option("a", nodes=2, cpu=6000, memory=8 * GI)) == pytest.approx(0.25 + 0.75)


@pytest.mark.parametrize(("expander", "options", "chosen"), [
    ("least-waste", [option("a", cpu=1000), option("b", cpu=3000)], "b"),
    ("most-pods", [option("a", pods=3), option("b", pods=5)], "b"),
    ("least-nodes", [option("a", nodes=3), option("b", nodes=2)], "b"),
    ("price", [option("a", nodes=2, pods=4, price=1.0), option("b", nodes=1, pods=1, price=1.0)], "a"),
])
def test_each_expander_keeps_its_best_option(expander, options, chosen):
    picked = choose(options, (expander,))
    assert picked is not None
    assert (picked.option.pool, picked.decided_by) == (chosen, expander)


def test_the_price_per_pod_is_the_price_of_the_new_nodes_over_the_pods_helped():
    assert price_per_pod(option("a", nodes=3, pods=6, price=0.5)) == pytest.approx(0.25)
    assert price_per_pod(option("a")) is None


def test_options_without_a_price_are_left_out_by_the_price_expander():
    picked = choose([option("cheap-unknown"), option("known", price=9.0)], ("price",))
    assert picked is not None and picked.option.pool == "known"


def test_a_tie_left_by_the_chain_goes_to_the_first_pool_by_name():
    picked = choose([option("b"), option("a")], ("least-waste",))
    assert picked is not None
    assert (picked.option.pool, picked.decided_by) == ("a", "pool name")


def test_a_chain_applies_each_expander_to_what_the_previous_kept():
    options = [option("a", pods=5, cpu=1000), option("b", pods=5, cpu=2000), option("c", pods=1, cpu=4000)]
    picked = choose(options, ("most-pods", "least-waste"))
    assert picked is not None
    assert picked.option.pool == "b"
    assert picked.kept == (("most-pods", ("a", "b")), ("least-waste", ("b",)))


def test_the_chain_stops_at_the_first_expander_that_leaves_one_option():
    options = [option("a", pods=9, cpu=1000), option("b", pods=5, cpu=4000)]
    picked = choose(options, ("most-pods", "least-waste"))
    assert picked is not None
    assert (picked.option.pool, picked.decided_by) == ("a", "most-pods")
    assert [name for name, _ in picked.kept] == ["most-pods"]


def test_the_random_expander_is_seeded():
    options = [option(name) for name in "abcdefgh"]
    first = choose(options, ("random",), seed=7)
    again = choose(options, ("random",), seed=7)
    assert first is not None and again is not None and first.option == again.option


def test_priority_takes_the_highest_priority_whose_expression_is_found_in_the_pool_name():
    priorities = parse_priorities({10: [".*"], 50: ["large"], 20: ["^spot-"]}, "f")
    picked = choose([option("spot-m5"), option("m5.large"), option("m5.small")], ("priority",), priorities)
    assert picked is not None and picked.option.pool == "m5.large"


def test_priority_leaves_out_pools_matching_no_expression():
    priorities = parse_priorities({10: ["^gpu"]}, "f")
    picked = choose([option("cpu", pods=9), option("gpu", pods=1)], ("priority", "most-pods"), priorities)
    assert picked is not None and picked.option.pool == "gpu"


def test_priority_keeps_every_pool_when_none_matches():
    priorities = parse_priorities({10: ["^gpu"]}, "f")
    picked = choose([option("a", pods=1), option("b", pods=2)], ("priority", "most-pods"), priorities)
    assert picked is not None and picked.option.pool == "b"


def test_no_option_chooses_nothing():
    assert choose([], ("least-waste",)) is None


@pytest.mark.parametrize(("text", "names"), [
    ("least-waste", ("least-waste",)),
    ("priority,least-waste", ("priority", "least-waste")),
    ("most-pods, random", ("most-pods", "random")),
])
def test_expander_names_are_read_as_a_chain(text, names):
    assert parse_expanders(text) == names


@pytest.mark.parametrize(("text", "problem"), [
    ("cheapest", "--expander cheapest: unknown expander 'cheapest' (known: least-waste, most-pods, least-nodes, "
                 "priority, price, random)"),
    ("most-pods,most-pods", "--expander most-pods,most-pods: most-pods is given twice; each expander may be given once"),
    ("random,most-pods", "--expander random,most-pods: most-pods comes after random, which always leaves one option"),
    ("grpc", "--expander grpc: unknown expander 'grpc' (known: least-waste, most-pods, least-nodes, priority, "
             "price, random)"),
])
def test_bad_expander_names_are_one_line_each(text, problem):
    with pytest.raises(ExpanderError) as err:
        parse_expanders(text)
    assert err.value.lines == [problem]


CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata:
  name: cluster-autoscaler-priority-expander
  namespace: kube-system
data:
  priorities: |-
    10:
      - .*t2\\.large.*
      - .*t3\\.large.*
    50:
      - .*m4\\.4xlarge.*
"""


def test_the_priority_file_may_be_cluster_autoscalers_configmap(tmp_path: Path):
    path = tmp_path / "cm.yaml"
    path.write_text(CONFIGMAP)
    priorities = read_priorities(str(path))
    assert priorities.of("eu-m4.4xlarge-spot") == 50
    assert priorities.of("t3.large") == 10
    assert priorities.of("c5.large") is None


def test_the_priority_file_may_be_the_priorities_alone(tmp_path: Path):
    path = tmp_path / "p.yaml"
    path.write_text("5:\n  - gpu\n'20':\n  - cpu\n")
    priorities = read_priorities(str(path))
    assert (priorities.of("gpu-a"), priorities.of("cpu-b")) == (5, 20)


@pytest.mark.parametrize(("text", "problem"), [
    ("high:\n  - a\n", "P: priority 'high' is not an integer"),
    ("10: gpu\n", "P: priority 10: want a list of regular expressions"),
    ("10:\n  - '(unclosed'\n", "P: priority 10: regular expression '(unclosed': missing ), unterminated subpattern at position 0"),
    ("- a\n", "P: want a map from priority (an integer) to a list of regular expressions"),
    ("kind: ConfigMap\ndata: {}\n", "P: ConfigMap has no data.priorities (cluster-autoscaler reads the priorities key)"),
    ("kind: ConfigMap\ndata:\n  priorities: ''\n", "P: data.priorities is empty"),
])
def test_a_bad_priority_file_is_one_line_naming_the_problem(tmp_path: Path, text: str, problem: str):
    path = tmp_path / "p.yaml"
    path.write_text(text)
    with pytest.raises(ExpanderError) as err:
        read_priorities(str(path))
    assert err.value.lines == [problem.replace("P:", f"{path}:")]


def test_a_missing_priority_file_names_the_file(tmp_path: Path):
    with pytest.raises(ExpanderError) as err:
        read_priorities(str(tmp_path / "none.yaml"))
    assert err.value.lines == [f"{tmp_path / 'none.yaml'}: No such file or directory"]
