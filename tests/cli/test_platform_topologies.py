"""Cluster topologies, zone routes, Wi-Fi and Vivaldi zones, state traces and output folders
SimGrid 3.32 or the run failed on (found by fuzzing on 2026-12-07): each is now refused
before the run (exit 2, at its line), and what lies just inside the limits runs."""

import json
import os
import pathlib
import signal
import subprocess
import time

import pytest

from cli_tool import BIN, SOURCE_DIR, refused, simcore

STAR = SOURCE_DIR / "scenarios" / "master_worker" / "star.xml"


def _platform(tmp_path, body):
    platform = tmp_path / "p.xml"
    platform.write_text("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                        f"<platform version=\"4.1\">\n{body}\n</platform>\n")
    return platform


def _cluster(topology, params, radical, extra=""):
    return (f'<cluster id="c" prefix="n-" suffix="" radical="{radical}" speed="1Gf" bw="1GBps" lat="1us" {extra} '
            f'topology="{topology}" topo_parameters="{params}"/>')


def _ROUTE(src, dst, extra=""):
    return f'<route src="{src}" dst="{dst}" {extra}><link_ctn id="l"/></route>'


def _zone(routing, routes, coordinates=""):
    return (f'<zone id="z" routing="{routing}"><host id="a" speed="1Gf" {coordinates}/><host id="b" speed="1Gf" '
            f'{coordinates}/><link id="l" bandwidth="1GBps" latency="1us"/>{routes}</zone>')


@pytest.mark.parametrize("body, expected", [
    # Aborts (exit 134): two dimensions of 1 name their links alike.
    (_cluster("TORUS", "4,1,1", "0-3"), "topo_parameters='4,1,1'; expected the size of each dimension, such as "
                                         "4,4,4: whole numbers from 1 to 1048576, at most one of them 1"),
    # Read as 2 by std::stoi (a torus of 2 hosts, the other radicals unused); exit 1 past an int.
    (_cluster("TORUS", "2x2", "0-3"), "topo_parameters='2x2'; expected the size of each dimension"),
    (_cluster("TORUS", "99999999999", "0-3"), "topo_parameters='99999999999'; expected the size of each dimension"),
    # An abort: fewer radicals than the topology's hosts.
    (_cluster("TORUS", "2,2,2", "0-3"), "<cluster> radical='0-3' names 4 hosts, but topology TORUS '2,2,2' makes 8; "
                                         "expected radicals for exactly 8 hosts, such as 0-7"),
    (_cluster("FAT_TREE", "2;4,4;1,2;1", "0-15"), "topo_parameters='2;4,4;1,2;1'; expected LEVELS;DOWN;UP;COUNT"),
    # An abort: limiter links are numbered by node, switches included.
    (_cluster("FAT_TREE", "1;2;3;2", "0-1", 'limiter_link="1GBps"'),
     "topo_parameters='1;2;3;2' with limiter_link: the tree has 3 switches for 2 hosts; expected no more switches"),
    # An abort: a fat tree's parameters given to a dragonfly.
    (_cluster("DRAGONFLY", "2;8,8;1,4;1,1", "0-7"),
     "topo_parameters='2;8,8;1,4;1,1'; expected GROUPS,LINKS;CHASSIS,LINKS;BLADES,LINKS;NODES"),
    # SIGSEGV routing from group 0 to group 2 (through blade 2 of 2).
    (_cluster("DRAGONFLY", "3,1;2,1;2,1;1", "0-11"), "expected no more groups than blades per chassis (2)"),
    # A billion hosts: SimGrid would have built them until memory ran out.
    (_cluster("TORUS", "1000,1000,1000", "0-3"), "makes 1000000000 hosts and about 3000000000 links; expected at most "
                                                  "1048576 hosts and 4194304 links"),
    # Hosts and links turned off: NetworkFailureException, exit 1 ("internal error").
    ('<zone id="z" routing="Full"><host id="a" speed="1Gf"/><trace id="t" periodicity="1">0 0&#10;0.5 1&#10;</trace>'
     '<trace_connect kind="HOST_AVAIL" trace="t" element="a"/></zone>',
     '<trace_connect kind="HOST_AVAIL"> turns a host off and on, and simcore\'s models assume hosts and links that '
     'never fail; expected no state trace'),
    ('<zone id="z" routing="Full"><host id="a" speed="1Gf" state_file="s.txt"/></zone>',
     "<host state_file=...> turns a host off and on"),
    ('<zone id="z" routing="Full"><host id="a" speed="1Gf"/><link id="l" bandwidth="1GBps" latency="0" '
     'state_file="s.txt"/></zone>', "<link state_file=...> turns a link off and on"),
    # Routes declared twice (a symmetrical one counts both ways): an abort in Full and Floyd
    # zones, SIGSEGV in Dijkstra ones; so was a symmetrical self route outside Full zones.
    (_zone("Full", _ROUTE("a", "b") + _ROUTE("b", "a")),
     "<route src=\"b\" dst=\"a\">: the route from 'b' to 'a' is declared already in zone 'z' (routes are "
     "symmetrical unless symmetrical=\"NO\"); expected one route a direction"),
    (_zone("Dijkstra", _ROUTE("a", "b") + _ROUTE("a", "b", 'symmetrical="NO"')),
     "the route from 'a' to 'b' is declared already in zone 'z'"),
    (_zone("Floyd", _ROUTE("a", "a") + _ROUTE("a", "b")),
     "<route src=\"a\" dst=\"a\"> in a <zone routing=\"Floyd\"> is symmetrical, so SimGrid 3.32 declares it twice"),
    # Aborts at the first message: no station rate without code, or no access point.
    ('<zone id="z" routing="Wifi"><prop id="access_point" value="r"/><router id="r"/><host id="a" speed="1Gf"/>'
     '<host id="b" speed="1Gf"/></zone>', '<zone routing="Wifi">; expected wired zones and links'),
    # An abort (3 dimensions expected), and a latency of inf ("deadlocked at t=inf", exit 1).
    (_zone("Full", "", 'coordinates="1 2 3 4"'), "<host> coordinates='1 2 3 4'; expected three numbers of at most "
                                                 "1e8 in size"),
    (_zone("Vivaldi", "", 'coordinates="1e308 1e308 -1e308"'), "<host> coordinates='1e308 1e308 -1e308'"),
    (_zone("Vivaldi", "", 'coordinates="1  2 3"'), "<host> coordinates='1  2 3'"),  # split at each space: an abort
    ('<zone id="z" routing="Vivaldi"><host id="a" speed="1Gf"/></zone>',
     '<host id="a"> of a Vivaldi zone without coordinates; expected coordinates=\'X Y HEIGHT\''),
    # Found by a structural fuzzing of platforms on 2026-12-07: each an abort, or SIGSEGV for the
    # <zoneRoute> naming its own zone, unless said.
    ('<zone id="z" routing="Full"><host id="a" speed="1Gf,2Gf" pstate="2"/></zone>',
     '<host pstate="2">; expected a whole number from 0 to 1, the index of one of its 2 speeds'),
    ('<zone id="z" routing="Full"><peer id="p" speed="1Gf" bw_in="1GBps" bw_out="1GBps" coordinates="0 0 0"/></zone>',
     '<peer id="p"> outside a Vivaldi zone (SimGrid 3.32 aborts)'),
    (_zone("Full", "").replace('bandwidth="1GBps"', 'bandwidth="1GBps,2GBps"'),
     '<link bandwidth="1GBps,2GBps">; expected one bandwidth'),
    ('<zone id="z" routing="Cluster"><host id="a" speed="1Gf"/><link id="l" bandwidth="1GBps" latency="0" '
     'sharing_policy="SPLITDUPLEX"/><host_link id="a" up="l" down="l_DOWN"/></zone>',
     '<host_link up="l">: no such link; expected one half of the SPLITDUPLEX link: l_UP or l_DOWN'),
    ('<zone id="z1" routing="Floyd"><zone id="z2" routing="Full"><host id="a" speed="1Gf"/></zone><zone id="z3" '
     'routing="Full"><host id="b" speed="1Gf"/></zone><link id="l" bandwidth="1GBps" latency="0"/><zoneRoute '
     'src="z1" dst="z3" gw_src="a" gw_dst="b"><link_ctn id="l"/></zoneRoute></zone>',
     '<zoneRoute src="z1"> names the zone that declares it'),
    # "Invalid CPU model: nullptr. Have you set the parent of this NetZone: c2?", without a line.
    ('<cluster id="c1" prefix="a-" suffix="" radical="0-1" speed="1Gf" bw="1GBps" lat="1us"/>'
     '<cluster id="c2" prefix="b-" suffix="" radical="0-1" speed="1Gf" bw="1GBps" lat="1us"/>',
     'a second root zone <cluster id="c2"> (the first is <cluster id="c1"> at '),
    # "cannot parse number:" (exit 2, no expectation), though the DTD's default is 0.
    (_zone("Full", "").replace(' latency="1us"', ""), '<link id="l"> without latency; expected latency="0"'),
    # A backbone of 0 B/s: "The Impossible Did Happen" at the first message.
    ('<cluster id="c" prefix="c-" suffix="" radical="0-1" speed="1Gf" bw="1GBps" lat="1us" bb_lat="1us"/>',
     "<cluster> bb_lat without bb_bw; expected both (a backbone) or neither"),
    (_zone("Full", '<trace id="t" periodicity="1">0 1&#10;</trace><trace_connect kind="BANDWIDTH" trace="t" '
                   'element="l"/>'),
     '<trace_connect kind="BANDWIDTH">: SimGrid 3.32 cannot set a link\'s bandwidth trace this way (it aborts)'),
    (_zone("Full", '<trace id="t" periodicity="0.5">0 1&#10;10 0.5&#10;</trace><trace_connect kind="SPEED" '
                   'trace="t" element="a"/>'),
     '<trace id="t">: periodicity 0.5 s; expected 0 (no repetition), or a time of at least the last date and 1 ms'),
])
def test_cluster_topologies_and_state_traces_simgrid_fails_on_are_refused(tmp_path, body, expected):
    platform = _platform(tmp_path, body)
    err = refused("platform", platform, cwd=tmp_path)
    assert f"{platform}:4: " in err and expected in err, err


def test_a_platform_of_more_than_2_20_hosts_is_refused(tmp_path):
    """radical="0-2147483647" built hosts until memory ran out (2^20 took 48 s and 5 GB)."""
    platform = _platform(tmp_path, '<cluster id="c" prefix="n-" suffix="" radical="0-2147483647" speed="1Gf" '
                                   'bw="1GBps" lat="1us"/>')
    err = refused("platform", platform, cwd=tmp_path)
    assert f"{platform}:3: the platform declares 2147483648 hosts; expected at most 1048576 (2^20)" in err, err


@pytest.mark.parametrize("cluster, hosts", [
    (_cluster("DRAGONFLY", "2,1;2,1;2,1;2", "0-15"), 16),           # as many groups as blades
    (_cluster("DRAGONFLY", "1,1;3,1;1,1;2", "0-5"), 6),             # one group, one blade
    (_cluster("TORUS", "4,4,1", "0-15"), 16),                       # one dimension of 1
    (_cluster("TORUS", "2, 2, 2", "0-7"), 8),                       # blanks, as SimGrid's std::stoi takes
    (_cluster("FAT_TREE", "2;4,4;2,2;1,1", "0-15", 'limiter_link="1GBps"'), 16),  # 12 switches
    (_zone("Full", _ROUTE("a", "a") + _ROUTE("a", "b")), 2),          # a symmetrical self route
    (_zone("Floyd", _ROUTE("a", "b", 'symmetrical="NO"') + _ROUTE("b", "a", 'symmetrical="NO"')), 2),
    (_zone("Dijkstra", _ROUTE("a", "a", 'symmetrical="NO"') + _ROUTE("a", "b")), 2),
    (_zone("Vivaldi", "", 'coordinates="1e8 -1e8 1.5"'), 2),
])
def test_topologies_and_routes_just_inside_the_limits_run(tmp_path, cluster, hosts):
    """The master sends to every other host (the dragonfly's routes between its groups included)."""
    platform = _platform(tmp_path, cluster)
    scenario = tmp_path / "s.xml"
    scenario.write_text(f'<?xml version="1.0"?>\n<scenario model="master_worker" seed="1">\n'
                        f'  <platform file="{platform}"/>\n  <param name="tasks" value="{2 * (hosts - 1)}"/>\n'
                        f'  <param name="task_bytes" value="1MB"/>\n</scenario>\n')
    res = simcore("run", scenario, "--out", tmp_path / "o", "--quiet", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    metrics = json.loads((tmp_path / "o" / "summary.json").read_text())["metrics"]
    assert metrics["workers"] == hosts - 1


def test_an_output_folder_the_system_refuses_files_in_is_refused_before_the_run(tmp_path):
    """access() grants root every folder: /proc passed the check and the run failed writing
    its trace (exit 1)."""
    err = refused("run", STAR, "--out", "/proc", cwd=tmp_path)
    assert "/proc: output folder: '/proc' is not writable (" in err, err
    assert not list(tmp_path.iterdir())
    out = tmp_path / "new" / "o"  # a folder still to be made: its nearest parent is tried, and left clean
    assert simcore("run", STAR, "--out", out, "--quiet", cwd=tmp_path).returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new"]
    assert not [p for p in (tmp_path / "new").iterdir() if p.name != "o"]


_HOSTS = '<host id="a" speed="1Gf"/><host id="b" speed="1Gf"/><link id="l" bandwidth="1GBps" latency="1us"/>'
_B_TO_A = _ROUTE("b", "a", 'symmetrical="NO"')


@pytest.mark.parametrize("zone, why", [
    # An empty route, then an abort at the first message ("no connecting path").
    (f'<zone id="z" routing="Full">{_HOSTS}</zone>', "SimGrid finds no path"),
    # An abort at the first message ("unexpected synchro state READY").
    (f'<zone id="z" routing="Floyd">{_HOSTS}{_B_TO_A}</zone>',
     "SimGrid: No route from 'a' to 'b'"),
    # Never ended: SimGrid 3.32 looked for the path without end.
    (f'<zone id="z" routing="Dijkstra">{_HOSTS}{_B_TO_A}</zone>',
     "SimGrid 3.32 never finished looking for it"),
    # An abort: "There can't be route in an Empty zone".
    (f'<zone id="z" routing="None">{_HOSTS}</zone>', "SimGrid 3.32 aborted: There can't be route in an Empty zone"),
])
@pytest.mark.parametrize("model", ["master_worker", "halo"])
def test_a_route_the_model_needs_and_the_platform_lacks_is_refused_before_the_run(tmp_path, zone, why, model):
    platform = _platform(tmp_path, zone)
    params = ('<param name="tasks" value="2"/>' if model == "master_worker" else
              '<param name="ranks" value="2"/><param name="procs" value="2,1,1"/><param name="periodic" value="false"/>'
              '<param name="ranks_per_node" value="1"/><param name="local_cells" value="8,8,8"/>')
    scenario = tmp_path / "s.xml"
    scenario.write_text(f'<?xml version="1.0"?>\n<scenario model="{model}" seed="1">\n'
                        f'  <platform file="{platform}"/>\n  {params}\n</scenario>\n')
    for command in (["validate"], ["run", "--out", tmp_path / "o"]):
        err = refused(command[0], scenario, *command[1:], cwd=tmp_path)
        assert err.count("\n") == 1, err
        assert (f"{platform}:4: no route from host 'a' to host 'b' in zone 'z' ({why}" in err
                and f"model '{model}' sends messages from one to the other; expected a <route>" in err), err
    assert not (tmp_path / "o").exists()


def test_a_route_between_zones_without_a_zone_route_is_refused_at_their_common_zone(tmp_path):
    platform = _platform(tmp_path, '<zone id="top" routing="Full">\n<zone id="za" routing="Full"><host id="a" '
                                   'speed="1Gf"/></zone>\n<zone id="zb" routing="Full"><host id="b" speed="1Gf"/>'
                                   '</zone>\n</zone>')
    scenario = tmp_path / "s.xml"
    scenario.write_text(f'<?xml version="1.0"?>\n<scenario model="master_worker" seed="1">\n'
                        f'  <platform file="{platform}"/>\n</scenario>\n')
    err = refused("validate", scenario, cwd=tmp_path)
    assert f"{platform}:4: no route from host 'a' to host 'b' in zone 'top' (SimGrid: " in err, err


def test_a_killed_run_takes_its_route_check_with_it(tmp_path):
    """The child asking SimGrid for routes searched a Dijkstra zone without end after its run
    was killed (parent 1, at full processor time)."""
    platform = _platform(tmp_path, f'<zone id="z" routing="Dijkstra">{_HOSTS}{_B_TO_A}</zone>')
    scenario = tmp_path / "s.xml"
    scenario.write_text(f'<?xml version="1.0"?>\n<scenario model="master_worker" seed="1">\n'
                        f'  <platform file="{platform}"/>\n</scenario>\n')
    run = subprocess.Popen([BIN, "validate", str(scenario)], cwd=tmp_path, stderr=subprocess.DEVNULL)
    children = []
    for _ in range(500):  # its child appears once the model is set up
        children = pathlib.Path(f"/proc/{run.pid}/task/{run.pid}/children").read_text().split()
        if children:
            break
        time.sleep(0.01)
    assert children, "no route check started"
    run.send_signal(signal.SIGTERM)
    run.wait(timeout=10)
    for _ in range(200):
        if not pathlib.Path(f"/proc/{children[0]}").exists() or \
                pathlib.Path(f"/proc/{children[0]}/stat").read_text().split()[2] == "Z":
            break
        time.sleep(0.01)
    else:
        os.kill(int(children[0]), signal.SIGKILL)
        raise AssertionError("the route check outlived its run")


@pytest.mark.parametrize("attribute, lines, expected", [
    ("speed_file", "0 1\n5 0.5\n2 1\n", "tr.txt:3: trace file 'tr.txt': line '2 1' has date 2 before the line above"),
    ("speed_file", "0 1\n0.001 0\n", "tr.txt:2: trace file 'tr.txt': line '0.001 0' has value 0; expected values "
                                      "above 0"),                           # "The Impossible Did Happen"
    ("speed_file", "0 1 2\n", "tr.txt:1: trace file 'tr.txt': line '0 1 2'; expected DATE VALUE"),
    ("speed_file", "PERIODICITY 1e-9\n0 1\n", "trace file 'tr.txt': periodicity 1e-09 s"),  # never ended
    # A message crossing the link when its latency changed was lost: "deadlocked", exit 1.
    ("latency_file", "0 0.001\n10 0.5\n", "<link latency_file=\"tr.txt\">: SimGrid 3.32 loses a message"),
])
def test_trace_files_simgrid_fails_on_are_refused_at_their_line(tmp_path, attribute, lines, expected):
    (tmp_path / "tr.txt").write_text(lines)
    element = "link" if attribute == "latency_file" else "host"
    platform = _platform(tmp_path, _zone("Full", _ROUTE("a", "b")).replace(f"<{element} ", f'<{element} {attribute}="tr.txt" ', 1))
    err = refused("platform", platform, cwd=tmp_path)
    assert expected in err, err


def test_trace_files_are_found_by_a_relative_path_and_used_once(tmp_path):
    """SimGrid 3.32 aborted on an absolute path ("Cannot open file": it reads "./" + the name,
    then the platform's folder + the name) or a missing file, on a file used twice, and on a
    speed_file beside a <trace_connect kind="SPEED">."""
    (tmp_path / "tr.txt").write_text("0 1\n5 0.5\n")
    body = _zone("Full", _ROUTE("a", "b"))
    platform = _platform(tmp_path, body.replace("<host ", f'<host speed_file="{tmp_path}/tr.txt" ', 1))
    assert "an absolute path; expected a path relative to the working directory or the platform's folder" in refused("platform", platform,
                                                                                           cwd=tmp_path)
    platform = _platform(tmp_path, body.replace("<host ", '<host speed_file="tr.txt" '))
    assert "the file is used at " in refused("platform", platform, cwd=tmp_path)
    platform = _platform(tmp_path, body.replace("<host ", '<host speed_file="tr.txt" ', 1).replace(
        "</zone>", '<trace id="t" periodicity="0">0 1&#10;</trace><trace_connect kind="SPEED" trace="t" element="a"/>'
                   '</zone>'))
    assert "and a <trace_connect kind=\"SPEED\"> at " in refused("platform", platform, cwd=tmp_path)
    platform = _platform(tmp_path, body.replace("<host ", '<host speed_file="nope.txt" ', 1))
    assert (f"no such file in the working directory ({tmp_path}) or the platform's folder ({tmp_path})"
            in refused("platform", platform, cwd=tmp_path))
    # The same trace, relative and once, runs, found from the platform's folder as from the
    # working directory: host a computes at half speed from t = 5 s.
    platform = _platform(tmp_path, body.replace("<host ", '<host speed_file="tr.txt" ', 1))
    assert simcore("platform", platform, cwd=tmp_path.parent).returncode == 0
    scenario = tmp_path / "s.xml"
    scenario.write_text(f'<?xml version="1.0"?>\n<scenario model="master_worker" seed="1">\n'
                        f'  <platform file="{platform}"/>\n  <param name="master" value="b"/>\n'
                        '  <param name="tasks" value="1"/>\n  <param name="task_bytes" value="0"/>\n'
                        '  <param name="task_flops" value="10Gf"/>\n</scenario>\n')
    res = simcore("run", scenario, "--out", tmp_path / "o", "--quiet", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    makespan = json.loads((tmp_path / "o" / "summary.json").read_text())["metrics"]["makespan"]
    # 5 Gf at 1 Gf/s, then 5 Gf at 0.5 Gf/s, after the empty task message (microseconds).
    assert makespan == pytest.approx(5 + 5 / 0.5, abs=1e-4) and makespan > 15
