"""halo model, SMPI-equivalent mode against SMPI running the real MPI halo program (small cases)."""

import importlib.util
import os
import pathlib
import shutil

import pytest

HERE = pathlib.Path(__file__).resolve().parent
BUILD = pathlib.Path(os.environ["SIMCORE_BIN"]).resolve().parents[1]
spec = importlib.util.spec_from_file_location("compare_smpi", HERE.parent / "validation" / "compare_smpi.py")
compare_smpi = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare_smpi)

needs_smpi = pytest.mark.skipif(shutil.which("smpirun") is None or not (BUILD / "bin" / "halo_mpi_smpi").exists(),
                                reason="smpirun or the smpicxx build of the MPI halo program is missing")


@needs_smpi
@pytest.mark.parametrize("case", compare_smpi.SMALL, ids=lambda c: "%s-%dr-%dpn-%d^3-%dv-%dpt" % (c[0][:5], *c[2:]))
def test_smpi_mode_within_5_percent_of_smpi(case):
    smpi, equivalent, detailed = compare_smpi.compare(case, BUILD)
    assert equivalent == pytest.approx(smpi, rel=0.05)
    assert detailed > 0


@needs_smpi
def test_mpi_program_refuses_a_grid_that_does_not_match(tmp_path):
    import subprocess

    (tmp_path / "hosts").write_text("c-0\nc-1\n")
    res = subprocess.run(["smpirun", "-np", "2", "-platform", str(compare_smpi.ROOT / "platforms" / "small_cluster.xml"),
                          "-hostfile", str(tmp_path / "hosts"), "--log=root.thres:critical",
                          str(BUILD / "bin" / "halo_mpi_smpi"), "--procs", "2,2,1"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert res.returncode != 0
    assert "the process grid holds 4 ranks, not 2" in res.stderr + res.stdout
