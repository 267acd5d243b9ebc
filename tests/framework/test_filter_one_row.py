"""``run_filters_on_row``: one node's filters (OpportunisticBatching's checks of the hint and
of the previous pod's node) answer as the filter pass over the whole table does."""

from __future__ import annotations

import numpy as np

from kubesched.framework.cycle_state import CycleState

from ..helpers import Cluster, framework, make_pod, node, pod, taint, toleration


def cluster() -> Cluster:
    return Cluster(
        [node("small", cpu="1"), node("cordoned", unschedulable=True), node("tainted", taints=[taint("gpu")]),
         node("busy", cpu="2"), node("free", cpu="8"), node("ports")],
        [pod("old", cpu="1500m", node_name="busy"), pod("web", host_ports=[80], node_name="ports")],
    )


def test_one_row_answers_as_the_whole_table_does():
    c = cluster()
    fwk = framework(c)
    pods = [make_pod("a", cpu="1"), make_pod("b", cpu="3", host_ports=[80]),
            make_pod("c", cpu="100m", tolerations=[toleration("gpu", operator="Exists")]), make_pod("d", node_name="free")]
    compared = rejected = 0
    for p in pods:
        state = CycleState()
        fwk.run_pre_filter(state, p, c.snapshot)
        table = c.snapshot.table
        outcome = fwk.run_filters(state, p, c.snapshot, table.alive[: table.size].copy())
        for row in np.asarray(table.order).tolist():
            whole = outcome.status_of(row)
            one = fwk.run_filters_on_row(state, p, c.snapshot, row)
            assert (one is None) == (whole is None), (p.key, row)
            if one is not None and whole is not None:
                assert (one.plugin, one.code, one.reasons) == (whole.plugin, whole.code, whole.reasons)
                rejected += 1
            compared += 1
    assert compared == 24 and rejected >= 8
