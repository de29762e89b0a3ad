"""Names a platform declares and names its routes use. SimGrid 3.32 aborted on a link declared
twice (also as a split-duplex link's half, or as a cluster's backbone) and refused the rest
without a line ("Refusing to create a second host named 'n2'", "Link not found: l", "Empty
route (between a and b) forbidden", "gw_src b belongs to z2, not to z1"). Each is now
refused at the element's line, naming the line that took the name first; valid uses load."""

import pytest

from cli_tool import refused, simcore

HOSTS = '<host id="a" speed="1Gf"/>\n<host id="b" speed="1Gf"/>'
LINK = '<link id="l" bandwidth="1GBps" latency="1us"/>'
SPLIT = '<link id="l" bandwidth="1GBps" latency="1us" sharing_policy="SPLITDUPLEX"/>'


def _platform(tmp_path, *lines):
    """A platform of one line per item, after 3 lines of header: item i is on line 4 + i."""
    platform = tmp_path / "p.xml"
    platform.write_text("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                        "<platform version=\"4.1\">\n" + "\n".join(lines) + "\n</platform>\n")
    return platform


def _full(*body):
    return ('<zone id="z" routing="Full">', *body, "</zone>")


def _two_zones(zone_route):
    return _full('<zone id="z1" routing="Full">', '<host id="a" speed="1Gf"/>', '<router id="r1"/>', "</zone>",
                 '<zone id="z2" routing="Full">', '<host id="b" speed="1Gf"/>', "</zone>", LINK, zone_route)


CLUSTER = '<cluster id="{id}" prefix="n" suffix="" radical="{radical}" speed="1Gf" bw="1GBps" lat="1us" {extra}/>'


@pytest.mark.parametrize("lines, line, expected", [
    # Aborts (exit 134): "Link 'l' declared several times in the platform".
    (_full(HOSTS, LINK, LINK), 8, "<link id=\"l\"> takes the name 'l', which <link id=\"l\"> at line 7 took "
                                  "already; expected unique link ids"),
    (_full(HOSTS, SPLIT, '<link id="l_UP" bandwidth="1GBps" latency="1us"/>'), 8,
     "<link id=\"l_UP\"> takes the name 'l_UP', which <link id=\"l\"> at line 7 took already"),
    (_full(CLUSTER.format(id="c1", radical="0-3", extra='bb_bw="1GBps" bb_lat="1us"'),
           '<zone id="y" routing="Full">', '<host id="h" speed="1Gf"/>',
           '<link id="c1_backbone" bandwidth="1GBps" latency="1us"/>', "</zone>"), 8,
     "<link id=\"c1_backbone\"> takes the name 'c1_backbone', which <cluster id=\"c1\"> at line 5 took already"),
    # Exit 2 without a line.
    (_full(HOSTS, '<host id="a" speed="2Gf"/>'), 7,
     "<host id=\"a\"> takes the name 'a', which <host id=\"a\"> at line 5 took already; expected unique names of "
     "hosts and routers"),
    (_full(HOSTS, '<router id="b"/>'), 7, "<router id=\"b\"> takes the name 'b', which <host id=\"b\"> at line 6"),
    (_full(CLUSTER.format(id="c1", radical="0-3", extra=""), CLUSTER.format(id="c2", radical="2-5", extra="")), 6,
     "<cluster id=\"c2\"> makes host 'n2', which <cluster id=\"c1\"> at line 5 took already; expected unique names "
     "of hosts and routers (another prefix, suffix or radical for a cluster)"),
    (_full(CLUSTER.format(id="c1", radical="0-3,2", extra="")), 5, "<cluster id=\"c1\"> makes host 'n2' twice"),
    (_full('<zone id="y" routing="Full">', '<host id="n1" speed="1Gf"/>', "</zone>",
           CLUSTER.format(id="c1", radical="0-3", extra="")), 8,
     "<cluster id=\"c1\"> makes host 'n1', which <host id=\"n1\"> at line 6 took already"),
    (_full('<zone id="y" routing="Full">', '<host id="a" speed="1Gf"/>', "</zone>",
           '<zone id="y" routing="Full">', '<host id="b" speed="1Gf"/>', "</zone>"), 8,
     "<zone id=\"y\"> takes the name 'y', which <zone id=\"y\"> at line 5 took already; expected unique ids of "
     "zones and clusters"),
    # "Link not found: l", no line.
    (_full(HOSTS, LINK, '<route src="a" dst="b"><link_ctn id="l" direction="UP"/></route>'), 8,
     "<link_ctn id=\"l\" direction=\"UP\">: link 'l' (line 7) is not SPLITDUPLEX, so it has no UP half; expected "
     "no direction, or sharing_policy=\"SPLITDUPLEX\" on the link"),
    (_full(HOSTS, SPLIT, '<route src="a" dst="b"><link_ctn id="l"/></route>'), 8,
     "<link_ctn id=\"l\">: link 'l' (line 7) is SPLITDUPLEX; expected direction=\"UP\" or \"DOWN\" (or its half "
     "'l_UP' or 'l_DOWN')"),
    # Links named l_UP and l_DOWN are no split-duplex link l: "Link not found: l".
    (_full(HOSTS, '<link id="l_UP" bandwidth="1GBps" latency="1us"/>', '<link id="l_DOWN" bandwidth="1GBps" '
           'latency="1us"/>', '<route src="a" dst="b"><link_ctn id="l" direction="UP"/></route>'), 9,
     "<link_ctn id=\"l\" direction=\"UP\">: no SPLITDUPLEX link 'l' in the platform; expected the id of a <link> "
     "with sharing_policy=\"SPLITDUPLEX\""),
    (_full(HOSTS, LINK, '<route src="a" dst="b"><link_ctn id="x"/></route>'), 8,
     "<link_ctn id=\"x\">: no link 'x' in the platform; expected the id of a <link>"),
    # "Empty route (between a and b) forbidden", no line.
    (_full(HOSTS, LINK, '<route src="a" dst="b"></route>'), 8,
     "<route src=\"a\" dst=\"b\"> holds no <link_ctn>; expected at least one link"),
    (_two_zones('<zoneRoute src="z1" dst="z2" gw_src="a" gw_dst="b"/>'), 13,
     "<zoneRoute src=\"z1\" dst=\"z2\"> holds no <link_ctn>"),
    (_full(HOSTS, LINK, '<route src="a" dst="b"><link_ctn id="l"/></route>', '<bypassRoute src="a" dst="b"/>'), 9,
     "<bypassRoute src=\"a\" dst=\"b\"> holds no <link_ctn>"),
    # "Invalid NetzoneRoute from z1@b to z2@a: gw_src b belongs to z2, not to z1", no line.
    (_two_zones('<zoneRoute src="z1" dst="z2" gw_src="b" gw_dst="b"><link_ctn id="l"/></zoneRoute>'), 13,
     "<zoneRoute gw_src=\"b\">: <host id=\"b\"> (line 10) is not inside zone 'z1' (line 5); expected a host or "
     "router of that zone"),
    (_two_zones('<zoneRoute src="z1" dst="z2" gw_src="a" gw_dst="r1"><link_ctn id="l"/></zoneRoute>'), 13,
     "<zoneRoute gw_dst=\"r1\">: <router id=\"r1\"> (line 7) is not inside zone 'z2' (line 9)"),
])
def test_names_simgrid_aborts_on_or_refuses_without_a_line_are_refused_at_theirs(tmp_path, lines, line, expected):
    platform = _platform(tmp_path, *lines)
    err = refused("platform", platform, cwd=tmp_path)
    assert err.startswith(f"simcore: error: {platform}:{line}: "), err
    assert expected in err, err


@pytest.mark.parametrize("lines", [
    # A split-duplex link's halves, by direction or by name.
    _full(HOSTS, SPLIT, '<route src="a" dst="b"><link_ctn id="l" direction="UP"/></route>'),
    _full(HOSTS, SPLIT, '<route src="a" dst="b" symmetrical="NO"><link_ctn id="l_DOWN"/></route>'),
    # A shared link and a split-duplex link of one name (SimGrid keeps them apart).
    _full(HOSTS, LINK, SPLIT, '<route src="a" dst="b"><link_ctn id="l"/><link_ctn id="l" direction="DOWN"/></route>'),
    # A gateway deeper inside its zone, and a router as a gateway.
    _full('<zone id="z1" routing="Full">', '<zone id="z1a" routing="Full">', '<host id="a" speed="1Gf"/>', "</zone>",
          "</zone>", '<zone id="z2" routing="Full">', '<host id="b" speed="1Gf"/>', '<router id="r2"/>', "</zone>",
          LINK, '<zoneRoute src="z1" dst="z2" gw_src="a" gw_dst="r2"><link_ctn id="l"/></zoneRoute>'),
    # A zone and a host of one name; clusters that do not overlap; a link named like a cluster's.
    _full('<zone id="a" routing="Full">', '<host id="a" speed="1Gf"/>', "</zone>"),
    _full(CLUSTER.format(id="c1", radical="0-3", extra=""), CLUSTER.format(id="c2", radical="4-7", extra=""),
          '<link id="l" bandwidth="1GBps" latency="1us"/>',
          '<zoneRoute src="c1" dst="c2" gw_src="nc1_router" gw_dst="nc2_router"><link_ctn id="l"/></zoneRoute>'),
])
def test_valid_names_and_references_load(tmp_path, lines):
    res = simcore("platform", _platform(tmp_path, *lines), cwd=tmp_path)
    assert res.returncode == 0, res.stderr


def test_version_4_0_spellings_are_checked_as_simgrid_reads_them(tmp_path):
    """SimGrid 3.32 reads <AS>, <ASroute> and FULLDUPLEX (version 4.0) as <zone>, <zoneRoute>
    and SPLITDUPLEX; the checks had refused its own examples crosstraffic.xml (a direction on
    a FULLDUPLEX link), routing_cluster.xml (a host_link to its halves) and two_peers.xml (a
    <peer> in a Vivaldi <AS>)."""
    full_duplex = SPLIT.replace("SPLITDUPLEX", "FULLDUPLEX")
    platforms = [
        ('<AS id="z" routing="Full">', HOSTS, full_duplex,
         '<route src="a" dst="b" symmetrical="NO"><link_ctn id="l" direction="DOWN"/></route>', "</AS>"),
        ('<AS id="z" routing="Cluster">', '<router id="r"/>', '<host id="a" speed="1Gf"/>', full_duplex,
         '<host_link id="a" up="l_UP" down="l_DOWN"/>', '<backbone id="bb" bandwidth="1GBps" latency="1us"/>', "</AS>"),
        ('<AS id="z" routing="Vivaldi">', '<peer id="p1" coordinates="1 2 3" speed="1Gf" bw_in="1GBps" '
         'bw_out="1GBps"/>', '<peer id="p2" coordinates="4 5 6" speed="1Gf" bw_in="1GBps" bw_out="1GBps"/>', "</AS>"),
    ]
    for lines in platforms:
        platform = _platform(tmp_path, *lines)
        platform.write_text(platform.read_text().replace('version="4.1"', 'version="4"'))
        res = simcore("platform", platform, cwd=tmp_path)
        assert res.returncode == 0, res.stderr
    # And what they name is checked: a second <AS> of one id.
    platform = _platform(tmp_path, '<AS id="z" routing="Full">', '<AS id="y" routing="Full">', HOSTS, "</AS>",
                         '<AS id="y" routing="Full"/>', "</AS>")
    platform.write_text(platform.read_text().replace('version="4.1"', 'version="4"'))
    assert "p.xml:9: <zone id=\"y\"> takes the name 'y', which <zone id=\"y\"> at line 5 took already" in \
        refused("platform", platform, cwd=tmp_path)
