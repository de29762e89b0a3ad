"""A profile applied to a simulation changes its result the way it should: bandwidth, eager
limit, flops per cell, network factors by placement."""

import json
import subprocess

import numpy as np
import pytest

from calibration_test_support import (
    POWERS, ROOT, SIMCORE, fitted, link_of, parse_factors, run_halo, two_segment_law, write_synthetic_network)


SMPI_ENVELOPE = 16  # B: SMPI mode sends every message with SMPI's envelope (tag, source, communicator)


def halo_time(tmp_path, profile):
    """Makespan of one transfer-bound exchange (SMPI mode, 1 x 500 x 500 cells, no compute)."""
    return run_halo(tmp_path, profile.stem, {"ranks_per_node": 2, "local_cells": "1,500,500", "periodic": "false",
                                             "variables": 1, "iterations": 1, "flops_per_cell": 0, "mode": "smpi"},
                    profile)


def test_profile_doubling_the_bandwidth_halves_a_transfer_bound_time(tmp_path):
    profiles = {}
    for name, bw in (("slow", 1e9), ("fast", 2e9)):
        profiles[name] = tmp_path / (name + ".json")
        profiles[name].write_text(json.dumps({"schema": "simcore-profile/1", "simgrid_config": {
            "network/model": "CM02", "network/loopback-bw": str(bw), "network/loopback-lat": "0"}}))
    slow, fast = halo_time(tmp_path, profiles["slow"]), halo_time(tmp_path, profiles["fast"])
    assert slow == pytest.approx((2e6 + SMPI_ENVELOPE) / 1e9, rel=1e-9)  # one 2 MB face over the loopback
    assert fast == pytest.approx(slow / 2, rel=1e-9)


def test_a_fitted_protocol_switch_sets_the_halo_eager_limit_in_detailed_mode(tmp_path):
    """A 12.8 kB face between two ranks of one node: a single copy under the default 4 KiB
    eager limit; eager under a profile whose intra-node switch lies at 16 KiB; a single copy
    again where the scenario sets the limit itself, or in SMPI mode."""
    profile = tmp_path / "switch.json"
    profile.write_text(json.dumps({"schema": "simcore-profile/1", "rates": {
        "network_protocol_switch_intra_node": {"value": 16384, "unit": "B"}}}))
    params = {"ranks_per_node": 2, "local_cells": "1,40,40", "periodic": "false", "variables": 1,
              "iterations": 1, "flops_per_cell": 0}

    def messages(name, extra, prof):
        m = run_halo(tmp_path, name, {**params, **extra}, prof, metric=None)
        return m.get("intra_eager_messages", 0), m.get("intra_single-copy_messages", 0)

    assert messages("plain", {}, None) == (0, 2)
    assert messages("fitted", {}, profile) == (2, 0)
    assert messages("given", {"intra_eager_limit": "4KiB"}, profile) == (0, 2)  # the scenario's value wins
    # SMPI mode keeps SMPI's own detached threshold: the profile changes nothing there.
    smpi = run_halo(tmp_path, "smpi", {**params, "mode": "smpi"}, profile, metric="makespan")
    smpi_plain = run_halo(tmp_path, "smpi_plain", {**params, "mode": "smpi"}, None, metric="makespan")
    assert smpi == smpi_plain


def halo_compute_time(tmp_path, name, profile, flops_param=None, cli_set=None):
    """compute_time_mean (s per iteration) of a 2-rank halo scenario on one node of 1 Gf cores."""
    extra = [] if cli_set is None else ["--set", "flops_per_cell=%s" % cli_set]
    return run_halo(tmp_path, name, {"ranks_per_node": 2, "local_cells": "10,10,10", "iterations": 2,
                                     "flops_per_cell": flops_param},
                    profile, metric="compute_time_mean", extra=extra)


def test_profile_flops_per_cell_sets_the_halo_compute_time_unless_the_scenario_gives_it(tmp_path):
    profiles = {}
    for name, flops in (("cheap", 100.0), ("dear", 200.0)):
        profiles[name] = tmp_path / (name + ".json")
        profiles[name].write_text(json.dumps({"schema": "simcore-profile/1", "rates": {
            "flops_per_cell": {"value": flops, "unit": "flop"}}}))
    no_rate = tmp_path / "no_rate.json"
    no_rate.write_text(json.dumps({"schema": "simcore-profile/1", "rates": {"memcpy_bandwidth": 20e9}}))
    cheap = halo_compute_time(tmp_path, "cheap", profiles["cheap"])
    dear = halo_compute_time(tmp_path, "dear", profiles["dear"])
    assert cheap == pytest.approx(1000 * 100.0 / 1e9, rel=1e-12)  # 10^3 cells per rank, 1 Gf
    assert dear == pytest.approx(2 * cheap, rel=1e-12)
    # Without the rate, or without a profile: the default, 50.
    assert halo_compute_time(tmp_path, "no_rate", no_rate) == pytest.approx(1000 * 50.0 / 1e9, rel=1e-12)
    assert halo_compute_time(tmp_path, "none", None) == pytest.approx(1000 * 50.0 / 1e9, rel=1e-12)
    # Given in the scenario or with --set, even at the default's value, the parameter wins.
    for name, kwargs in (("param_50", dict(flops_param=50)), ("param_300", dict(flops_param=300)),
                         ("set_50", dict(cli_set=50))):
        expected = 1000 * float(kwargs.get("flops_param", kwargs.get("cli_set"))) / 1e9
        for profile in profiles.values():
            assert halo_compute_time(tmp_path, name + profile.stem, profile, **kwargs) == pytest.approx(expected,
                                                                                                        rel=1e-12)


def test_a_time_that_falls_with_size_gives_a_flat_segment_the_simulation_follows(tmp_path):
    """Times that fall from 256 B to 64 KiB once gave a segment of negative slope, written as
    bandwidth factor 1: SMPI then added s / bandwidth, 2.7 x the fitted time at 64 KiB. Now no
    segment falls, and a flat one's bytes cost nothing in SMPI's factors either."""
    sizes = 2.0 ** np.arange(0, 25)
    def law(s):
        s = np.asarray(s, dtype=float)
        return np.where(s < 256, 2e-6 + s / 4e9, np.where(s <= 65536, 5e-6 - 1e-11 * s, 1e-5 + s / 1e10))
    trace = tmp_path / "pp.h5"
    write_synthetic_network(trace, sizes, law)
    p = fitted(tmp_path, trace)
    segs = p["quality"]["network"]["segments"]
    assert all(seg["bandwidth"] >= 0 and seg["latency"] >= 0 for seg in segs)
    lat, bw = link_of(p)
    lat_f = parse_factors(p["network_factors"]["inter-node"]["latency"])
    bw_f = parse_factors(p["network_factors"]["inter-node"]["bandwidth"])
    # What SMPI computes from the factors is what the fitted segments say, at every size.
    for s in sizes:
        lf = next(f for bound, f in lat_f if s > bound or bound == 0)
        bf = next(f for bound, f in bw_f if s > bound or bound == 0)
        seg = [g for g in segs if g["from"] <= s][-1]
        fitted_time = seg["latency"] + (s / seg["bandwidth"] if seg["bandwidth"] > 0 else 0)
        assert lat * lf + s / (bw * bf) == pytest.approx(fitted_time, rel=1e-4, abs=1e-10)


def test_a_link_rule_leaves_the_loopback_to_its_configuration(tmp_path):
    """A profile fitted from both placements has a link rule '.*' (inter-node) and the loopback
    configuration (intra-node). The rule once matched SimGrid's __loopback__ too, and two ranks
    on one host then ran at the inter-node link's speed."""
    profile = tmp_path / "both.json"
    profile.write_text(json.dumps({"schema": "simcore-profile/1",
                                   "links": [{"match": ".*", "bandwidth": "0.5GBps", "latency": "0s"}],
                                   "simgrid_config": {"network/model": "CM02", "network/loopback-bw": "1e9",
                                                      "network/loopback-lat": "0"}}))
    assert halo_time(tmp_path, profile) == pytest.approx((2e6 + SMPI_ENVELOPE) / 1e9, rel=1e-9)  # the loopback's 1 GB/s


def test_a_profile_of_both_placements_predicts_each_as_its_own_profile_does(tmp_path):
    """Fitted from an intra-node and an inter-node trace together, a profile carries each fit's
    factors in network_factors (not SimGrid's one set, smpi/*-factor, which would shape the
    messages within a host with the inter-node fit). A halo exchange of 2 ranks on one host then
    takes exactly what the intra-node profile alone gives, and on two hosts what the inter-node
    one gives, at every face size from 128 B to 2 MB; and the two placements differ."""
    intra, inter = tmp_path / "intra.h5", tmp_path / "inter.h5"
    write_synthetic_network(intra, POWERS, two_segment_law(0.4e-6, 8e9, 65536, 4e-6, 2e10), placement="intra-node")
    write_synthetic_network(inter, POWERS, two_segment_law(2e-6, 3e9, 16384, 9e-6, 1e10), placement="inter-node")
    profiles, fits = {}, {}
    for name, traces in (("both", (intra, inter)), ("intra", (intra,)), ("inter", (inter,))):
        (tmp_path / name).mkdir()
        fits[name] = fitted(tmp_path / name, *traces)
        profiles[name] = tmp_path / (name + ".json")
        profiles[name].write_text(json.dumps(fits[name]))
    both = fits["both"]
    assert not {"smpi/lat-factor", "smpi/bw-factor"} & set(both["simgrid_config"])
    for placement, alone in (("intra-node", fits["intra"]), ("inter-node", fits["inter"])):
        assert both["network_factors"][placement] == alone["network_factors"][placement]
        assert list(alone["network_factors"]) == [placement]
    assert "note" not in both["quality"]["network_intra_node"]
    platform = ROOT / "platforms" / "two_nodes.xml"
    for cells in (4, 16, 64, 128, 256, 500):  # faces of 8 x cells^2 bytes
        times = {}
        for ranks_per_node, alone in ((2, "intra"), (1, "inter")):
            params = {"ranks_per_node": ranks_per_node, "local_cells": f"1,{cells},{cells}", "periodic": "false",
                      "variables": 1, "iterations": 1, "flops_per_cell": 0, "mode": "smpi"}
            t = run_halo(tmp_path, f"both-{alone}-{cells}", params, profiles["both"], platform=platform)
            assert t == pytest.approx(run_halo(tmp_path, f"{alone}-{cells}", params, profiles[alone],
                                               platform=platform), rel=1e-9)
            times[alone] = t
        assert times["inter"] > 1.5 * times["intra"]


@pytest.mark.parametrize("model, cfg", [("SMPI", "smpi/lat-factor:0:3"), (None, "network/latency-factor:3"),
                                        (None, "smpi/bw-factor:0:2"), ("SMPI", "network/bandwidth-factor:0.5")])
def test_network_factors_and_configured_factors_together_are_refused(tmp_path, model, cfg):
    """SimGrid takes its configured factors or the callbacks that network_factors become, not
    both; each model reads its own pair of keys, and a value set for the other would be recorded
    in summary.json as if it applied: any of the four beside network_factors is bad input."""
    profile = tmp_path / "nf.json"
    profile.write_text(json.dumps({"schema": "simcore-profile/1",
                                   "simgrid_config": {"network/model": model} if model else {},
                                   "network_factors": {"inter-node": {"latency": "0:2", "bandwidth": "0:0.5"}}}))
    params = {"ranks_per_node": 1, "local_cells": "1,8,8", "periodic": "false", "variables": 1, "iterations": 1,
              "flops_per_cell": 0, "mode": "smpi"}
    with pytest.raises(subprocess.CalledProcessError) as e:
        run_halo(tmp_path, "mixed", params, profile, extra=("--cfg=" + cfg,), platform=ROOT / "platforms" / "two_nodes.xml")
    assert e.value.returncode == 2
    key = cfg.split(":")[0]
    assert f"{profile}:1 (network_factors): {key} is set too (by the profile, the scenario or --cfg)" in e.value.stderr
    assert not (tmp_path / "mixed" / "summary.json").exists()


CLUSTER = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="c" prefix="c-" suffix="" radical="0-1" speed="1Gf" core="2" bw="1GBps" lat="10us"
           bb_bw="10GBps" bb_lat="1us"{loopback}/>
</platform>
"""


def test_on_a_cluster_messages_within_a_node_follow_the_intra_node_fit_over_its_loopback(tmp_path):
    """A <cluster> with loopback_bw gives each node a loopback link (c_link_N_loopback), which the
    intra-node fit's network/loopback-* set as they set SimGrid's own: two ranks on one node of
    the cluster take exactly what they take on single_node.xml with the intra-node profile, and
    one rank a node what the inter-node profile gives there. Without loopback_bw a node reaches
    itself over its links to the backbone, which carry the inter-node fit: its messages to
    itself then take the inter-node factors too, and the run says so."""
    intra, inter = tmp_path / "intra.h5", tmp_path / "inter.h5"
    write_synthetic_network(intra, POWERS, two_segment_law(0.4e-6, 8e9, 65536, 4e-6, 2e10), placement="intra-node")
    write_synthetic_network(inter, POWERS, two_segment_law(2e-6, 3e9, 16384, 9e-6, 1e10), placement="inter-node")
    profiles = {}
    for name, traces in (("both", (intra, inter)), ("intra", (intra,)), ("inter", (inter,))):
        (tmp_path / name).mkdir()
        profiles[name] = tmp_path / (name + ".json")
        profiles[name].write_text(json.dumps(fitted(tmp_path / name, *traces)))
    with_loopback, without = tmp_path / "cluster_lo.xml", tmp_path / "cluster.xml"
    with_loopback.write_text(CLUSTER.format(loopback=' loopback_bw="1GBps" loopback_lat="50us"'))
    without.write_text(CLUSTER.format(loopback=""))
    for cells in (16, 128, 500):
        params = {"local_cells": f"1,{cells},{cells}", "periodic": "false", "variables": 1, "iterations": 1,
                  "flops_per_cell": 0, "mode": "smpi"}
        within = dict(params, ranks_per_node=2)
        across = dict(params, ranks_per_node=1)
        t = run_halo(tmp_path, f"lo-in-{cells}", within, profiles["both"], platform=with_loopback)
        assert t == pytest.approx(run_halo(tmp_path, f"single-{cells}", within, profiles["intra"]), rel=1e-9)
        t = run_halo(tmp_path, f"lo-across-{cells}", across, profiles["both"], platform=with_loopback)
        assert t == pytest.approx(run_halo(tmp_path, f"inter-across-{cells}", across, profiles["inter"],
                                           platform=with_loopback), rel=1e-9)
        t = run_halo(tmp_path, f"no-lo-in-{cells}", within, profiles["both"], platform=without)
        assert t == pytest.approx(run_halo(tmp_path, f"inter-in-{cells}", within, profiles["inter"], platform=without),
                                  rel=1e-9)
    scenario = tmp_path / "halo_no-lo-in-16.xml"
    res = subprocess.run([SIMCORE, "run", str(scenario), "--out", str(tmp_path / "again")], capture_output=True,
                         text=True)
    assert res.returncode == 0, res.stderr
    assert "2 host(s) reach themselves over links, not a loopback (c-0: c_link_0_UP c_backbone c_link_0_DOWN)" \
        in res.stderr and "declare loopback_bw and loopback_lat on the <cluster>" in res.stderr
    summary = json.loads((tmp_path / "again" / "summary.json").read_text())
    assert summary["network_factors"] == json.loads(profiles["both"].read_text())["network_factors"]
    # simcore validate, which starts no simulation, checks the same (the check runs when a
    # simulation starts, once the platform is sealed, and validate calls it itself).
    res = subprocess.run([SIMCORE, "validate", str(scenario)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "2 host(s) reach themselves over links, not a loopback" in res.stderr


SHIPPED_CLUSTERS = ("small_cluster.xml", "two_clusters.xml", "fat_tree.xml", "fat_tree_144.xml", "large_cluster.xml")


def test_on_the_shipped_clusters_messages_within_a_node_follow_the_intra_node_fit(tmp_path):
    """Every shipped platform whose nodes hold several cores declares a loopback per node: with a
    profile of both placements, two ranks on one of its nodes take exactly what they take on
    single_node.xml with the intra-node profile alone (the profile's loopback values replace the
    platform's), and no run warns that a host reaches itself over its NIC links."""
    intra, inter = tmp_path / "intra.h5", tmp_path / "inter.h5"
    write_synthetic_network(intra, POWERS, two_segment_law(0.4e-6, 8e9, 65536, 4e-6, 2e10), placement="intra-node")
    write_synthetic_network(inter, POWERS, two_segment_law(2e-6, 3e9, 16384, 9e-6, 1e10), placement="inter-node")
    profiles = {}
    for name, traces in (("both", (intra, inter)), ("intra", (intra,))):
        (tmp_path / name).mkdir()
        profiles[name] = tmp_path / (name + ".json")
        profiles[name].write_text(json.dumps(fitted(tmp_path / name, *traces)))
    within = {"ranks_per_node": 2, "local_cells": "1,128,128", "periodic": "false", "variables": 1, "iterations": 1,
              "flops_per_cell": 0, "mode": "smpi"}
    expected = run_halo(tmp_path, "single", within, profiles["intra"])
    for platform in SHIPPED_CLUSTERS:
        name = platform.split(".")[0]
        assert run_halo(tmp_path, name, within, profiles["both"], platform=ROOT / "platforms" / platform) == \
            pytest.approx(expected, rel=1e-9), platform
        res = subprocess.run([SIMCORE, "run", str(tmp_path / f"halo_{name}.xml"), "--out", str(tmp_path / (name + "2"))],
                             capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
        assert "reach themselves over links" not in res.stderr, platform


def test_a_profile_of_one_placement_leaves_the_other_placement_alone(tmp_path):
    """A profile fitted within a node carries its factors for messages within a host only:
    SimGrid's smpi/*-factor would scale every message, and this machine's intra-node fit (a
    latency factor of 1425 from 6 MB on) once made a 2 MB face between two nodes take 157 ms
    instead of 45. Between two nodes such a profile gives what SMPI's network model gives with
    factors of 1 and no profile, at every face size; within a node it changes the time."""
    intra = tmp_path / "intra.h5"
    write_synthetic_network(intra, POWERS, two_segment_law(0.4e-6, 8e9, 65536, 40e-6, 2e10), placement="intra-node")
    profile = tmp_path / "intra.json"
    profile.write_text(json.dumps(fitted(tmp_path, intra)))
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({"schema": "simcore-profile/1", "simgrid_config": {
        "network/model": "SMPI", "smpi/lat-factor": "0:1", "smpi/bw-factor": "0:1"}}))
    platform = ROOT / "platforms" / "two_nodes.xml"
    for cells in (16, 128, 512):
        params = {"local_cells": f"1,{cells},{cells}", "periodic": "false", "variables": 1, "iterations": 1,
                  "flops_per_cell": 0, "mode": "smpi"}
        across = dict(params, ranks_per_node=1)
        assert run_halo(tmp_path, f"intra-across-{cells}", across, profile, platform=platform) == \
            pytest.approx(run_halo(tmp_path, f"plain-across-{cells}", across, plain, platform=platform), rel=1e-12)
        within = dict(params, ranks_per_node=2)
        assert run_halo(tmp_path, f"intra-within-{cells}", within, profile, platform=platform) != \
            pytest.approx(run_halo(tmp_path, f"plain-within-{cells}", within, plain, platform=platform), rel=1e-3)


def test_a_simulated_exchange_between_two_nodes_takes_the_fitted_ping_ping_time(tmp_path):
    """Ping-ping times include what the traffic the other way costs: the profile turns off
    SimGrid's cross-traffic, which charged each message 5 % of the reverse one on top. A halo
    exchange of one face each way between the two hosts of two_nodes.xml then takes the fitted
    law's time for the face, on both sides of the protocol switch (before: 655 kB took 88.8 us
    against the law's 85.5)."""
    law = two_segment_law(5e-6, 5e9, 65536, 20e-6, 1e10)
    trace = tmp_path / "inter.h5"
    write_synthetic_network(trace, POWERS, law, law, placement="inter-node")
    p = fitted(tmp_path, trace)
    assert p["simgrid_config"]["network/crosstraffic"] == "0"
    profile = tmp_path / "inter.json"
    profile.write_text(json.dumps(p))
    for cells in (16, 64, 143, 286):  # faces of 2, 32, 164 and 655 kB
        params = {"ranks_per_node": 1, "local_cells": f"1,{cells},{cells}", "periodic": "false", "variables": 1,
                  "iterations": 1, "flops_per_cell": 0, "mode": "smpi"}
        face = 8 * cells * cells
        t = run_halo(tmp_path, f"exchange-{cells}", params, profile, platform=ROOT / "platforms" / "two_nodes.xml")
        assert t == pytest.approx(float(law(face)), rel=2e-3), face


def test_a_factor_left_out_of_network_factors_is_one(tmp_path):
    """Both callbacks are installed whenever network_factors are: a bandwidth factor given for
    neither placement is 1, not the default model's 0.97 (LV08), as the README says."""
    platform = ROOT / "platforms" / "two_nodes.xml"
    params = {"ranks_per_node": 1, "local_cells": "1,500,500", "periodic": "false", "variables": 1,
              "iterations": 1, "flops_per_cell": 0, "mode": "smpi"}
    times = {}
    for name, factors in (("latency-only", {"latency": "0:1"}), ("both", {"latency": "0:1", "bandwidth": "0:1"})):
        profile = tmp_path / (name + ".json")
        profile.write_text(json.dumps({"schema": "simcore-profile/1", "network_factors": {"inter-node": factors}}))
        times[name] = run_halo(tmp_path, name, params, profile, platform=platform)
    assert times["latency-only"] == times["both"]


def test_the_halo_models_own_predictions_see_network_factors(tmp_path):
    """The halo model's dynamic policy predicts each route's time with the network's factors. A
    profile whose network_factors are all 1 under the default model (LV08, whose configured
    factors 13.01 and 0.97 the callbacks replace) simulates the network of CM02 without factors,
    and the policy must choose as it does there: the same protocols and the same times."""
    scenario = ROOT / "scenarios" / "halo" / "one_rank_per_node_dynamic.xml"
    ones = tmp_path / "ones.json"
    ones.write_text(json.dumps({"schema": "simcore-profile/1", "network_factors": {
        p: {"latency": "0:1", "bandwidth": "0:1"} for p in ("intra-node", "inter-node")}}))
    cm02 = tmp_path / "cm02.json"
    cm02.write_text(json.dumps({"schema": "simcore-profile/1", "simgrid_config": {"network/model": "CM02"}}))
    metrics = {}
    for profile in (ones, cm02):
        out = subprocess.run([SIMCORE, "run", str(scenario), "--calibration", str(profile), "--json", "--quiet",
                              "--out", str(tmp_path / profile.stem)], capture_output=True, text=True, check=True)
        metrics[profile.stem] = json.loads(out.stdout)["metrics"]
    assert metrics["ones"] == metrics["cm02"]
    m = metrics["ones"]
    assert m.get("inter_eager_messages", 0) + m.get("inter_rendezvous_messages", 0) == 192


def test_cached_copy_rates_set_the_intra_node_copies_in_detailed_mode(tmp_path):
    """Two ranks of one node, each single-copying the other's 1.28 MB face at once through the
    node's bus (20 GB/s by default): 2 us + 2 x 1.28 MB / 20 GB/s. With a profile's cached-copy
    rate of 50 GB/s (all copies together), copies up to its limit share that instead; one
    core's rate bounds a copy however idle the bus; the start-up comes from the profile's
    network fit unless the scenario gives it."""
    face = 400 * 400 * 8.0
    params = {"ranks_per_node": 2, "local_cells": "1,400,400", "periodic": "false", "variables": 1,
              "iterations": 1, "flops_per_cell": 0}

    def profile(name, **rates):
        path = tmp_path / (name + ".json")
        path.write_text(json.dumps({"schema": "simcore-profile/1", "rates": {
            k: {"value": v, "unit": "s" if k.startswith("network") else ("B" if k.endswith("limit") else "Bps")}
            for k, v in rates.items()}}))
        return path

    def time(name, prof, **extra):
        return run_halo(tmp_path, name, {**params, **extra}, prof)

    cached = dict(cached_copy_bandwidth=50e9, cached_copy_limit=2**21)
    assert time("none", None) == pytest.approx(2e-6 + 2 * face / 20e9, rel=1e-9)
    assert time("cached", profile("cached", **cached)) == pytest.approx(2e-6 + 2 * face / 50e9, rel=1e-9)
    # A face above the limit goes at the bus's rate.
    assert time("above", profile("above", cached_copy_bandwidth=50e9, cached_copy_limit=2**20)) == \
        pytest.approx(2e-6 + 2 * face / 20e9, rel=1e-9)
    # One core copies at 8 GB/s at most: slower than its share of the bus (25 GB/s).
    assert time("one", profile("one", cached_copy_bandwidth_one_core=8e9, **cached)) == \
        pytest.approx(2e-6 + face / 8e9, rel=1e-9)
    started = profile("started", network_latency_past_switch_intra_node=5e-6, **cached)
    assert time("started", started) == pytest.approx(5e-6 + 2 * face / 50e9, rel=1e-9)
    assert time("given", started, single_copy_startup="1us") == pytest.approx(1e-6 + 2 * face / 50e9, rel=1e-9)
    # The scenario's own rates, without a profile; SMPI mode reads none of them.
    assert time("by_hand", None, cached_copy_bandwidth="40GBps", cached_copy_limit="4MiB") == \
        pytest.approx(2e-6 + 2 * face / 40e9, rel=1e-9)
    assert time("smpi", started, mode="smpi") == time("smpi_plain", None, mode="smpi")


def test_a_cached_copy_rate_without_a_limit_is_refused(tmp_path):
    with pytest.raises(subprocess.CalledProcessError) as e:
        run_halo(tmp_path, "no_limit", {"ranks_per_node": 2, "cached_copy_bandwidth": "40GBps"})
    assert "parameter 'cached_copy_bandwidth' is set but no 'cached_copy_limit'" in e.value.stderr
    profile = tmp_path / "no_limit.json"
    profile.write_text(json.dumps({"schema": "simcore-profile/1", "rates": {
        "cached_copy_bandwidth": {"value": 4e10, "unit": "Bps"}}}))
    with pytest.raises(subprocess.CalledProcessError) as e:
        run_halo(tmp_path, "no_limit_profile", {"ranks_per_node": 2}, profile)
    assert "the profile's rate 'cached_copy_bandwidth' is set but no 'cached_copy_limit'" in e.value.stderr


def test_one_cores_copy_rate_binds_alike_at_both_granularities_and_in_the_dynamic_policy(tmp_path):
    """Eight ranks of one node (2 x 2 x 2, periodic: six 40,960 B faces a rank, single copies)
    whose bus is fast but whose cores copy at 1 GB/s: each rank starts its six single copies
    and copies its six faces in turn, the ranks side by side, 6 x 2 us + 6 x 40960 B / 1 GB/s
    an iteration, whether one actor carries each rank or the node. And the dynamic policy knows that one core's rate: eager
    (two copies) looks no cheaper than one copy, and it keeps the single copy."""
    platform = tmp_path / "eight_cores.xml"
    platform.write_text("""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1"><zone id="z" routing="Full"><host id="node-0" speed="1Gf" core="8"/></zone></platform>
""")
    rates = {"cached_copy_bandwidth": "1000GBps", "cached_copy_bandwidth_one_core": "1GBps",
             "cached_copy_limit": "8MiB"}
    params = {"local_cells": "32,32,32", "ranks_per_node": 8, "iterations": 2,
              "flops_per_cell": 0, **rates}
    for granularity in ("rank", "node"):
        t = run_halo(tmp_path, granularity, {**params, "granularity": granularity}, platform=platform,
                     metric="iteration_time", extra=["--set", "ranks=8", "--set", "procs=2,2,2"])
        assert t == pytest.approx(6 * 2e-6 + 6 * 40960 / 1e9, rel=1e-9)
    two = {"ranks_per_node": 2, "local_cells": "1,400,400", "periodic": "false", "variables": 1, "iterations": 1,
           "flops_per_cell": 0, "cached_copy_bandwidth": "640GBps", "cached_copy_bandwidth_one_core": "10GBps",
           "cached_copy_limit": "8MiB"}
    static = run_halo(tmp_path, "static", {**two, "policy": "static"}, metric=None)
    dynamic = run_halo(tmp_path, "dynamic", {**two, "policy": "dynamic"}, metric=None)
    assert dynamic["makespan"] == static["makespan"] == pytest.approx(2e-6 + 400 * 400 * 8 / 10e9, rel=1e-9)
    assert "intra_eager_messages" not in dynamic


def test_an_intra_node_fit_sets_the_single_copy_rate_in_detailed_mode(tmp_path):
    """Two ranks of one node single-copy each other's 1.28 MB face at once. An intra-node
    network fit measured such a copy (kernel-assisted, both ranks copying) at the loopback's
    rate at that size, after the fit's latency there: with a profile that has one (here a
    loopback of 4 GB/s and 1 us, factors of 1), a single copy goes no faster and starts up in
    that latency, 1 us + S / 4 GB/s, where the bus alone (20 GB/s for both copies) gives the
    fixed start-up, 2 us + 2 S / 20 GB/s. A start-up the scenario gives holds at every size.
    'bus' keeps the bus alone; 'route' takes the loopback's rate without a profile too
    (single_node.xml's, as configured), with the fixed start-up."""
    face = 400 * 400 * 8.0
    params = {"ranks_per_node": 2, "local_cells": "1,400,400", "periodic": "false", "variables": 1,
              "iterations": 1, "flops_per_cell": 0}
    fit = tmp_path / "fit.json"
    fit.write_text(json.dumps({"schema": "simcore-profile/1",
                               "simgrid_config": {"network/loopback-bw": "4e9", "network/loopback-lat": "1e-6"},
                               "network_factors": {"intra-node": {"latency": "0:1", "bandwidth": "0:1"}}}))
    assert run_halo(tmp_path, "fit", params, fit) == pytest.approx(1e-6 + face / 4e9, rel=1e-9)
    assert run_halo(tmp_path, "fit_node", {**params, "granularity": "node"}, fit) == \
        pytest.approx(1e-6 + face / 4e9, rel=1e-9)
    assert run_halo(tmp_path, "fit_given", {**params, "single_copy_startup": "3us"}, fit) == \
        pytest.approx(3e-6 + face / 4e9, rel=1e-9)
    bus = 2e-6 + 2 * face / 20e9
    assert run_halo(tmp_path, "fit_bus", {**params, "single_copy_rate": "bus"}, fit) == pytest.approx(bus, rel=1e-9)
    assert run_halo(tmp_path, "none", params) == pytest.approx(bus, rel=1e-9)
    slow = {**params, "single_copy_rate": "route"}
    assert run_halo(tmp_path, "route", slow, extra=["--cfg=network/loopback-bw:5e9"]) == \
        pytest.approx(2e-6 + face / (5e9 * 0.97), rel=1e-9)  # SimGrid's default bandwidth factor


def test_a_single_copy_starts_up_in_the_fits_latency_at_its_size(tmp_path):
    """The fit's segments past the protocol switch differ in their intercepts (here 1 us below
    1 MB and 3 us from 1 MB, at 4 and 2 GB/s): a lone single copy between two ranks takes what
    the fit says at its size, its segment's latency + S / its rate, at both granularities and
    as the dynamic policy keeps it; not the first segment's start-up at every size. Two
    single copies to one rank (three ranks in a row, the middle one receiving both) start up
    one after the other: 2 x 3 us, then the two copies on the bus."""
    fit = tmp_path / "segments.json"
    fit.write_text(json.dumps({"schema": "simcore-profile/1",
                               "simgrid_config": {"network/loopback-bw": "4e9", "network/loopback-lat": "1e-6"},
                               "network_factors": {"intra-node": {"latency": "1000000:3;0:1",
                                                                  "bandwidth": "1000000:0.5;0:1"}},
                               "rates": {"network_latency_past_switch_intra_node": {"value": 5e-6, "unit": "s"}}}))
    base = {"ranks_per_node": 2, "periodic": "false", "variables": 1, "iterations": 1, "flops_per_cell": 0}
    small, large = 100 * 100 * 8.0, 400 * 400 * 8.0
    for granularity in ("rank", "node"):
        for policy in ("static", "dynamic"):
            params = {**base, "granularity": granularity, "policy": policy}
            assert run_halo(tmp_path, f"s_{granularity}_{policy}", {**params, "local_cells": "1,100,100"}, fit) == \
                pytest.approx(1e-6 + small / 4e9, rel=1e-9)
            assert run_halo(tmp_path, f"l_{granularity}_{policy}", {**params, "local_cells": "1,400,400"}, fit) == \
                pytest.approx(3e-6 + large / 2e9, rel=1e-9)
    # With the bus alone the profile's start-up past the switch holds at every size.
    assert run_halo(tmp_path, "bus", {**base, "local_cells": "1,400,400", "single_copy_rate": "bus"}, fit) == \
        pytest.approx(5e-6 + 2 * large / 20e9, rel=1e-9)
    # Three ranks in a row: the middle one receives two faces, starts them up in turn, then
    # copies both at the fit's rate (its two copies one after another: one rank copies); at
    # node granularity the node waits for its rank with the longest start-ups.
    for granularity in ("rank", "node"):
        three = run_halo(tmp_path, f"three_{granularity}",
                         {**base, "ranks_per_node": 3, "local_cells": "1,400,400", "granularity": granularity}, fit,
                         extra=["--set", "ranks=3", "--set", "procs=3,1,1"])
        assert three == pytest.approx(2 * 3e-6 + 2 * large / 2e9, rel=1e-9)
    # Four ranks of 10 x 400 x 400 cells in a 2 x 2 grid: each receives a 1.28 MB x face and a
    # 32 kB y face, from segments of their own: 3 us + 1 us of start-ups, then both copies.
    for granularity in ("rank", "node"):
        four = run_halo(tmp_path, f"four_{granularity}",
                        {**base, "ranks_per_node": 4, "local_cells": "10,400,400", "granularity": granularity}, fit,
                        extra=["--set", "ranks=4", "--set", "procs=2,2,1"])
        assert four == pytest.approx(3e-6 + 1e-6 + large / 2e9 + 10 * 400 * 8 / 4e9, rel=1e-9)
