"""Clusters and TMEM in the occupancy model.

The cluster model replays every answer the H200's driver gave
(``cudaOccupancyMaxActiveClusters``, recorded by benchmarks/cluster_occupancy_h200.py in
results/cluster_occupancy_h200.csv): each must come out the same, with the CTAs per SM too
(``cudaOccupancyMaxActiveBlocksPerMultiprocessor``). The TMEM limit is the PTX ISA's word
(``tcgen05.alloc`` blocks until enough columns are free), with no Blackwell GPU to check it on.
"""

from __future__ import annotations

import csv
import pathlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from smemviz import hardware, occupancy
from smemviz.analysis._occupancy import max_active_clusters

CSV = pathlib.Path(__file__).resolve().parents[2] / "results" / "cluster_occupancy_h200.csv"
EMPTY_KERNEL_REGISTERS = 4  # the probe's empty kernel, as its '#' lines say


def recorded() -> tuple[dict[str, str], list[dict[str, str]]]:
    facts: dict[str, str] = {}
    lines = []
    for line in CSV.read_text().splitlines():
        if line.startswith("# ") and ": " in line:
            key, _, value = line[2:].partition(": ")
            facts[key] = value
        elif line and not line.startswith("#"):
            lines.append(line)
    return facts, list(csv.DictReader(lines))


FACTS, ROWS = recorded()


def shape(row: dict[str, str]) -> tuple[int, int, int]:
    return int(row["cluster_x"]), int(row["cluster_y"]), int(row["cluster_z"])


def test_the_record_is_the_h200s_and_covers_the_table():
    assert FACTS["device"].startswith("NVIDIA H200")
    assert FACTS["cudaDevAttrClusterLaunch"] == "1"
    assert int(FACTS["cudaDevAttrMultiProcessorCount"]) == hardware.sm_count("sm_90")
    assert FACTS["empty kernel"].startswith(f"{EMPTY_KERNEL_REGISTERS} registers")
    assert all(row["status"] == "ok" for row in ROWS)
    sizes = {int(row["cluster_size"]) for row in ROWS}
    assert set(range(1, 17)) <= sizes
    assert {row["threads"] for row in ROWS} == {"128", "256", "384"}
    assert {"0", str(50 * 1024), str(100 * 1024), str(150 * 1024), str(227 * 1024)} <= {
        row["dynamic_smem"] for row in ROWS
    }
    assert len(ROWS) == 744


def test_every_recorded_answer_is_the_models():
    wrong = []
    for row in ROWS:
        occ = occupancy(
            int(row["dynamic_smem"]),
            "sm_90a",
            threads=int(row["threads"]),
            registers=EMPTY_KERNEL_REGISTERS,
            cluster=shape(row),
        )
        got = (occ.resident_ctas, occ.max_active_clusters)
        want = (int(row["ctas_per_sm"]), int(row["max_active_clusters"]))
        if got != want:
            wrong.append((row, got, want))
    assert not wrong, wrong[:5]


def test_the_gpc_layout_is_the_one_the_sm_ids_showed():
    readout = FACTS["gpc readout"]
    sizes = tuple(int(n) for n in readout.split("sizes:")[1].split())
    assert sizes == hardware.get_arch("sm_90").gpc_sms
    assert sum(sizes) == hardware.sm_count("sm_90")


@pytest.mark.parametrize(
    ("ctas_per_sm", "size", "clusters"),
    [
        (1, 1, 132),  # every SM, one CTA
        (1, 2, 66),  # the four lone pairs take one cluster of 2 each
        (1, 4, 30),  # ... and none of 4
        (1, 9, 9),  # the two GPCs of 18 hold two clusters of 9 each
        (1, 16, 7),  # the GPC of 8 holds none
        (2, 16, 14),  # a cluster's CTAs on SMs of their own: not 2 x 8 on the GPC of 8
        (16, 1, 1056),  # a cluster launch keeps at most 8 CTAs on an SM
    ],
)
def test_the_cases_that_set_the_model(ctas_per_sm, size, clusters):
    assert max_active_clusters(ctas_per_sm, size, "sm_90") == clusters


def test_cluster_in_the_message_and_its_checks():
    occ = occupancy(150 * 1024, "sm_90a", threads=128, cluster=(4, 4, 1))
    assert (occ.cluster_size, occ.max_active_clusters, occ.cluster_ctas, occ.cluster_ctas_per_sm) == (16, 7, 112, 1)
    assert "clusters of 16, non-portable: 7 active at once on 132 SMs (112 CTAs, <= 1 per SM)" in occ.message()
    small = occupancy(0, "sm_90a", threads=128, cluster=2)
    assert small.resident_ctas == 16 and small.cluster_ctas_per_sm == 8
    assert "clusters of 2: 528 active at once on 132 SMs (1,056 CTAs, <= 8 per SM)" in small.message()
    assert occupancy(0, "sm_90a").cluster_size is None
    unknown = occupancy(0, "sm_100a", cluster=2)
    assert unknown.max_active_clusters is None and "no GPC layout for sm_100" in unknown.message()
    with pytest.raises(ValueError, match="no thread-block clusters"):
        occupancy(0, "sm_80", cluster=2)
    with pytest.raises(ValueError, match="over the 16"):
        occupancy(0, "sm_90a", cluster=(4, 4, 2))
    with pytest.raises(ValueError, match="over the 8"):
        occupancy(0, "sm_120", cluster=16)
    with pytest.raises(ValueError, match="shape of 1 to 3"):
        occupancy(0, "sm_90a", cluster=0)


@pytest.mark.parametrize(
    ("columns", "alloc", "holding"),
    [(1, 32, 16), (32, 32, 16), (33, 64, 8), (128, 128, 4), (129, 256, 2), (256, 256, 2), (300, 512, 1)],
)
def test_tmem_allocation_caps_the_ctas_that_work_at_once(columns, alloc, holding):
    occ = occupancy(10 * 1024, "sm_100a", threads=128, tmem_columns=columns)
    assert (occ.tmem_alloc, occ.by_tmem) == (alloc, holding)
    assert occ.ctas == min(occ.resident_ctas, holding)


def test_tmem_named_as_the_limiter_and_the_waiting_ctas():
    occ = occupancy(60 * 1024, "sm_100a", threads=128, tmem_columns=200)
    assert (occ.resident_ctas, occ.ctas, occ.limiter) == (3, 2, "TMEM")
    text = occ.message()
    assert text.startswith("sm_100: 2 CTAs/SM (limited by TMEM)")
    assert "TMEM: 256 columns per CTA, room for 2 CTAs/SM (3 resident: the others wait in tcgen05.alloc)" in text
    # smem the limit, TMEM not: the next level still counts TMEM
    roomy = occupancy(60 * 1024, "sm_100a", threads=128, tmem_columns=100)
    assert (roomy.ctas, roomy.limiter, roomy.by_tmem) == (3, "shared memory", 4)
    assert roomy.next_smem_per_cta is not None
    tight = occupancy(150 * 1024, "sm_100a", threads=128, tmem_columns=512)  # both allow 1: SMEM named
    assert (tight.ctas, tight.limiter, tight.next_smem_per_cta) == (1, "shared memory", None)
    # sm_107: past the 512 shared columns, one CTA holds the whole TMEM
    assert occupancy(0, "sm_107", tmem_columns=576).by_tmem == 1
    assert occupancy(0, "sm_100a", tmem_columns=0).by_tmem is None


def test_tmem_checks():
    with pytest.raises(ValueError, match="no tensor memory"):
        occupancy(0, "sm_90a", tmem_columns=128)
    with pytest.raises(ValueError, match="exceed"):
        occupancy(0, "sm_100a", tmem_columns=513)
    with pytest.raises(ValueError, match=">= 0"):
        occupancy(0, "sm_100a", tmem_columns=-1)


def test_l1_beside_the_carveout():
    occ = occupancy(200 * 1024, "sm_90a")
    assert (occ.carveout_kib, occ.l1_kib) == (228, 28)
    assert occ.message().endswith("; 28 KiB L1 beside the 228 KiB carveout")
    small = occupancy(10 * 1024, "sm_80", threads=256)
    assert (small.resident_ctas, small.carveout_kib, small.l1_kib) == (8, 100, 92)
    assert occupancy(0, "sm_107").l1_kib is None


def test_check_takes_the_cluster_and_tmem_columns(tmp_path, capsys, monkeypatch):
    from smemviz import SmemAllocation, SmemAllocator
    from smemviz.cli import main

    monkeypatch.delenv("CUTE_DSL_ARCH", raising=False)
    s = SmemAllocator(arch="sm_90a")
    s.add(SmemAllocation("buf", 150 * 1024, 1024))
    s.compute_layout()
    path = tmp_path / "p.json"
    path.write_text(s.plan.to_json())
    assert main(["check", str(path), "--threads", "128", "--cluster", "16"]) == 0
    assert (
        "clusters of 16, non-portable: 7 active at once on 132 SMs (112 CTAs, <= 1 per SM)" in capsys.readouterr().out
    )
    assert main(["check", str(path), "--arch", "sm_100a", "--tmem-columns", "300"]) == 0
    assert "TMEM: 512 columns per CTA, room for 1 CTA/SM" in capsys.readouterr().out
    assert main(["check", str(path), "--tmem-columns", "128"]) == 2
    assert "sm_90 has no tensor memory" in capsys.readouterr().err


@given(smem=st.integers(0, 227 * 1024), threads=st.integers(1, 1024))
def test_cluster_counts_fall_with_size_and_never_exceed_the_sms(smem, threads):
    sms = hardware.sm_count("sm_90")
    counts = []
    for size in range(1, 17):
        occ = occupancy(smem, "sm_90a", threads=threads, cluster=size)
        assert occ.cluster_ctas_per_sm == min(occ.resident_ctas, 8)
        assert occ.cluster_ctas is not None and occ.cluster_ctas <= sms * occ.cluster_ctas_per_sm
        counts.append(occ.max_active_clusters)
    assert counts[0] == sms * min(occupancy(smem, "sm_90a", threads=threads).resident_ctas, 8)
    assert counts == sorted(counts, reverse=True)
