"""Each GPU kernel's figures, read from the tools' real output (recorded on an H100): the
registers and local memory ptxas fixed (`cuobjdump -res-usage`), Nsight Compute's counters
for one call (`ncu --csv`), both joined by kernel name, and what a sandboxed worker may send
for them typed on arrival."""

from __future__ import annotations

from pathlib import Path

from gpurunner.facts import CandidateFacts
from gpurunner.judge import kernel_figures
from gpurunner.kernel_resources import binaries, describe, parse_res_usage
from gpurunner.ncu import parse_csv

RECORDED = Path(__file__).parent / "fixtures" / "profilers"


def test_cuobjdump_gives_each_function_its_registers_and_local_memory():
    rows = parse_res_usage((RECORDED / "cuobjdump_res_usage_h100.txt").read_text())
    assert [(r["name"], r["registers"], r["local_bytes"]) for r in rows] == [
        ("_Z5lightPfi", 8, 0), ("heavy", 24, 560)]  # heavy was held to 24 registers: it spills


def test_ncu_csv_becomes_one_row_per_kernel_longest_first():
    rows = parse_csv((RECORDED / "ncu_csv_h100.txt").read_text())
    assert [r["name"] for r in rows][1:] == ["add", "f"]
    softmax, add, _ = rows
    assert softmax["duration_us"] == 67.264  # "67,264" ns: ncu writes thousands separators
    assert add == {"name": "add", "launches": 1, "duration_us": 43.392, "registers": 56,
                   "dram_pct": 77.67, "sm_pct": 5.76, "occupancy_pct": 47.46,
                   "theoretical_occupancy_pct": 56.25}


def test_launches_of_one_kernel_add_their_times_and_weigh_their_percentages():
    text = (RECORDED / "ncu_csv_h100.txt").read_text()
    lines = text.splitlines()
    again = [ln.replace('"1","503"', '"3","503"').replace("43,392", "130,176").replace(
        '"77.67"', '"97.67"') for ln in lines if ln.startswith('"1",')]
    rows = parse_csv("\n".join(lines + again))
    add = next(r for r in rows if r["name"] == "add")
    assert add["launches"] == 2 and add["duration_us"] == 173.568
    assert add["dram_pct"] == round((77.67 * 43.392 + 97.67 * 130.176) / 173.568, 2)
    assert rows[0]["name"] == "add"  # now the longest


def test_output_without_a_table_gives_no_rows():
    assert parse_csv("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission") == []


def test_counters_and_compiled_figures_join_by_kernel_name():
    resources = [{"name": "elementwise_add_kernel(const float *, const float *, float *, int)",
                  "registers": 16, "local_bytes": 0, "shared_bytes": 0, "from": "cuobjdump"},
                 {"name": "unused_kernel(float *)", "registers": 8, "local_bytes": 32,
                  "shared_bytes": 0, "from": "cuobjdump"}]
    counters = [{"name": "elementwise_add_kernel(const float *, const float *, float *, int)",
                 "launches": 1, "duration_us": 73.056, "dram_pct": 78.1, "registers": 16},
                {"name": "void at::vectorized_elementwise_kernel<4, at::FillFunctor<float>, "
                         "std::array<char *, 1>>(int, T2, T3)", "launches": 1,
                 "duration_us": 21.28, "dram_pct": 62.82}]
    rows = kernel_figures(resources, counters)
    assert [r["name"][:22] for r in rows] == ["elementwise_add_kernel", "void at::vectorized_el",
                                                "unused_kernel(float *)"]
    assert rows[0]["local_bytes"] == 0 and rows[0]["dram_pct"] == 78.1
    assert "duration_us" not in rows[2]


def test_a_kernel_reads_as_one_line():
    text = describe({"name": "add", "registers": 56, "local_bytes": 560, "shared_bytes": 4096,
                     "launches": 2, "duration_us": 43.392, "dram_pct": 77.67, "sm_pct": 5.76,
                     "occupancy_pct": 47.46, "theoretical_occupancy_pct": 56.25})
    assert text == ("`add`: 56 registers/thread, 560 B local memory/thread (register spills or "
                    "local arrays), 4 KiB static shared memory, 43.39 us under ncu over 2 "
                    "launches, DRAM throughput 77.7% of peak, SM throughput 5.76%, achieved "
                    "occupancy 47.5% of 56.2% theoretical")
    assert "no local memory (no spills)" in describe({"name": "f", "registers": 8, "local_bytes": 0})


def test_a_workers_kernel_rows_are_typed_on_arrival():
    facts = CandidateFacts.from_message({"kernels": [
        {"name": "ok", "registers": 40, "local_bytes": 0, "from": "cuobjdump"},
        {"name": "<script>alert(1)</script>" * 40, "registers": 1e9, "local_bytes": "lots",
         "dram_pct": float("nan"), "from": "me"},
        {"registers": 12},
        "not a row"]})
    assert facts.kernels[0] == {"name": "ok", "registers": 40, "local_bytes": 0, "from": "cuobjdump"}
    assert facts.kernels[1] == {"name": ("<script>alert(1)</script>" * 40)[:300]}
    assert len(facts.kernels) == 2
    assert CandidateFacts.from_message({"kernels": "many"}).malformed == ["kernels"]


def test_binaries_are_found_without_following_links(tmp_path):
    (tmp_path / "ext" / "add").mkdir(parents=True)
    (tmp_path / "ext" / "add" / "add.so").write_bytes(b"\x7fELF")
    (tmp_path / "triton" / "HASH").mkdir(parents=True)
    (tmp_path / "triton" / "HASH" / "add_kernel.cubin").write_bytes(b"\x7fELF")
    (tmp_path / "triton" / "HASH" / "__triton_launcher.so").write_bytes(b"\x7fELF")
    (tmp_path / "triton" / "HASH" / "add_kernel.ptx").write_text("//")
    (tmp_path / "ext" / "planted.so").symlink_to("/etc/passwd")
    (tmp_path / "ext" / "elsewhere").symlink_to("/usr/lib", target_is_directory=True)
    found = binaries([tmp_path / "ext", tmp_path / "triton"])
    assert sorted(p.name for p in found) == ["add.so", "add_kernel.cubin"]
