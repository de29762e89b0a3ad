#!/usr/bin/env python3
"""Deterministic structural fuzzer of simcore's SimGrid platform loading.

Generates N small, mostly valid SimGrid 3.32 platforms (DTD 4.1) from a seed, each with zero,
one or two targeted perturbations, then runs

  1. simcore platform p.xml
  2. if that succeeds and the platform has at least 2 hosts, a master_worker scenario on it:
     simcore run scenario.xml --out out --quiet

and checks simcore's contract: every input either works (exit 0) or is refused with exit
code 2 and ONE stderr line 'simcore: error: FILE:LINE: ... expected ...'. Anything else (a
signal, exit 1, a hang, an exit-2 message without a line or without 'expected', SimGrid noise
on stderr) is flagged. Flagged cases are grouped by a normalised message.

Only the standard library; the same seed gives the same platforms byte for byte.

  /usr/bin/python3 tests/fuzz/platform_fuzz.py --bin build/simcore --cases 300 --seed 1 --keep /tmp/fuzz_keep

Exit status: 0 when nothing was flagged, 1 otherwise (2 on bad usage).
"""

import argparse
import collections
import concurrent.futures
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time

from fuzz_messages import add_common_arguments, failure_class, mask, run_command

# --------------------------------------------------------------------------------------------
# A tiny XML tree, serialised one element per line (so that line numbers mean something)
# --------------------------------------------------------------------------------------------


class E:
    __slots__ = ("tag", "attrs", "children", "text", "raw")

    def __init__(self, tag, attrs=None, children=None, text=None, raw=None):
        self.tag = tag
        self.attrs = dict(attrs or {})
        self.children = list(children or [])
        self.text = text      # inline text (trace contents)
        self.raw = raw        # a raw line written as is (syntax perturbations)

    def add(self, *els):
        self.children.extend(els)
        return self

    def walk(self, parent=None):
        yield self, parent
        for c in self.children:
            yield from c.walk(self)


def _esc_attr(v):
    return v.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")


def _esc_text(v):
    return v.replace("&", "&amp;").replace("<", "&lt;")


class Style:
    """How to write the XML: plain, or with unusual but valid whitespace and quoting."""

    def __init__(self, rng=None):
        self.rng = rng  # None: plain style
        self.newline = "\n"
        if rng is not None and rng.random() < 0.25:
            self.newline = "\r\n"

    def attr_sep(self):
        if self.rng is None:
            return " "
        return self.rng.choice([" ", "  ", "\t", "\n    ", " \n\t ", "\r\n  " if self.newline == "\r\n" else "\n"])

    def eq(self):
        if self.rng is None:
            return "="
        return self.rng.choice(["=", " = ", "=\t", "\n=\n"])

    def quote(self, value):
        if self.rng is not None and '"' not in value and "'" not in value and self.rng.random() < 0.5:
            return "'" + _esc_attr(value) + "'"
        return '"' + _esc_attr(value) + '"'

    def close_ws(self):
        if self.rng is None:
            return ""
        return self.rng.choice(["", " ", "\t", "\n"])

    def blank_lines(self):
        if self.rng is None or self.rng.random() < 0.7:
            return ""
        return self.rng.choice(["\n", "\n\n", "  \n", "<!-- a comment -->\n"])


def serialise(root, style, header=True, doctype=True, version_attr=True):
    out = []
    if header:
        out.append("<?xml version='1.0'?>\n")
    if doctype:
        out.append('<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n')

    def emit(el, depth):
        ind = "  " * depth
        if el.raw is not None:
            out.append(ind + el.raw + "\n")
            return
        out.append(style.blank_lines())
        attrs = "".join(style.attr_sep() + k + style.eq() + style.quote(v) for k, v in el.attrs.items())
        if el.text is not None:
            out.append(f"{ind}<{el.tag}{attrs}{style.close_ws()}>{_esc_text(el.text)}</{el.tag}>\n")
        elif not el.children:
            out.append(f"{ind}<{el.tag}{attrs}{style.close_ws()}/>\n")
        else:
            out.append(f"{ind}<{el.tag}{attrs}{style.close_ws()}>\n")
            for c in el.children:
                emit(c, depth + 1)
            out.append(f"{ind}</{el.tag}>\n")

    emit(root, 0)
    text = "".join(out)
    if style.newline != "\n":
        text = text.replace("\r\n", "\n").replace("\n", style.newline)
    return text


# --------------------------------------------------------------------------------------------
# Generator of mostly valid platforms
# --------------------------------------------------------------------------------------------

MAX_HOSTS = 64
GRAPH_ROUTINGS = ["Full", "Floyd", "Dijkstra", "DijkstraCache"]


class Platform:
    """A generated platform: its tree, the files beside it, and what the perturbations target."""

    def __init__(self, rng):
        self.rng = rng
        self.root = E("platform", {"version": "4.1"})
        self.files = {}                 # file name -> contents (trace files beside p.xml)
        self.hosts = []                 # host names, in creation order
        self.host_elems = []            # (host element, parent zone element)
        self.links = {}                 # link id -> (element, parent, sharing policy)
        self.routers = []               # router names
        self.leaf_zones = []            # (zone element, kind) kind: Full, Floyd, ..., Cluster, Vivaldi, None, peers
        self.internal_zones = []        # zone elements holding zones
        self.zone_ids = []              # every zone id (clusters included)
        self.clusters = []              # (cluster element, parent)
        self.routes = []                # (route/zoneRoute/bypassRoute element, parent zone element)
        self.traces = []                # trace ids
        self.numbers = []               # (element, attribute, kind) numeric attributes
        self.gateways = {}              # zone id -> gateway name
        self.speed_traced = set()       # hosts with a speed trace already (SimGrid takes one)
        self.counter = 0
        self.style = Style()
        self.header = True
        self.doctype = True
        self.labels = []                # perturbations applied
        self.text_edits = []            # functions applied to the serialised text

    # -- names and values ---------------------------------------------------------------------
    def uid(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def speed(self):
        r = self.rng
        return r.choice([f"{r.choice([1, 2, 4, 0.5, 3.5, 10])}Gf", f"{r.choice([100, 250, 800])}Mf",
                         f"{r.choice([1, 2.5, 8])}e9f", f"{r.choice([1, 2])}Tf", f"{r.choice([1, 3])}e9flops",
                         "1000000000f"])

    def bandwidth(self):
        r = self.rng
        return r.choice([f"{r.choice([1, 10, 12.5, 25])}GBps", f"{r.choice([100, 125, 500])}MBps",
                         f"{r.choice([1, 10, 100])}Gbps", f"{r.choice([1, 4])}GiBps", f"{r.choice([100, 512])}MiBps",
                         f"{r.choice([800, 1000])}Mbps", "1TBps", f"{r.choice([1e8, 1.25e9])}Bps", "50000kBps"])

    def latency(self):
        r = self.rng
        return r.choice([f"{r.choice([1, 5, 50, 0.5])}us", f"{r.choice([1, 0.1, 2])}ms", f"{r.choice([100, 500])}ns",
                         "0", f"{r.choice([1e-6, 5e-5])}s", "0s", "0.0001s"])

    def new_link(self, parent, policy=None, lid=None):
        r = self.rng
        lid = lid or self.uid(r.choice(["l", "link-", "net.l", "L_"]))
        if policy is None:
            policy = r.choices(["SHARED", "SPLITDUPLEX", "FATPIPE", None], [3, 3, 1, 3])[0]
        attrs = {"id": lid, "bandwidth": self.bandwidth(), "latency": self.latency()}
        if policy is not None:
            attrs["sharing_policy"] = policy
        el = E("link", attrs)
        self.numbers += [(el, "bandwidth", "bw"), (el, "latency", "lat")]
        if r.random() < 0.1:
            el.add(E("prop", {"id": "kind", "value": r.choice(["nic", "wan", "ib"])}))
        if r.random() < 0.06:
            name = self.uid("bw_") + ".txt"
            self.files[name] = self.trace_body("bw")
            el.attrs["bandwidth_file"] = name
        self.links[lid] = (el, parent, policy or "SHARED")
        return el

    def link_ctn(self, lid, reverse=False):
        policy = self.links[lid][2]
        attrs = {"id": lid}
        if policy == "SPLITDUPLEX":
            attrs["direction"] = "DOWN" if reverse else "UP"
        return E("link_ctn", attrs)

    def trace_body(self, kind, inline=False):
        r = self.rng
        n = r.randint(1, 4)
        dates = sorted({0.0} | {round(r.uniform(0.5, 20), 3) for _ in range(n)})
        if kind == "bw":
            values = [r.choice([1e8, 5e8, 1.25e9, 2e9]) for _ in dates]
        else:
            values = [r.choice([1.0, 0.5, 0.25, 0.8]) for _ in dates]
        lines = [f"{d:g} {v:g}" for d, v in zip(dates, values)]
        head = []
        if not inline and r.random() < 0.3:
            head.append(f"PERIODICITY {dates[-1] + r.choice([1, 5, 10]):g}")
        elif not inline and r.random() < 0.1:
            head.append(f"LOOPAFTER {dates[-1] + 2:g}")
        return "\n".join(head + lines) + "\n"

    def host(self, parent, name=None, coordinates=False):
        r = self.rng
        name = name or self.uid(r.choice(["h", "host-", "node.", "cpu_"]))
        attrs = {"id": name}
        if r.random() < 0.2:
            speeds = [self.speed() for _ in range(r.randint(2, 4))]
            attrs["speed"] = ",".join(speeds)
            attrs["pstate"] = str(r.randrange(len(speeds)))
        else:
            attrs["speed"] = self.speed()
        if r.random() < 0.3:
            attrs["core"] = str(r.choice([1, 2, 4, 8, 16]))
        if coordinates:
            attrs["coordinates"] = self.coords()
        el = E("host", attrs)
        self.numbers.append((el, "speed", "speed"))
        if "core" in attrs:
            self.numbers.append((el, "core", "int"))
        if "pstate" in attrs:
            self.numbers.append((el, "pstate", "int"))
        if coordinates:
            self.numbers.append((el, "coordinates", "coords"))
        if r.random() < 0.15:
            el.add(E("prop", {"id": r.choice(["rack", "memory", "arch"]), "value": r.choice(["1", "A", "64GiB"])}))
        if r.random() < 0.07:
            fname = self.uid("speed_") + ".txt"
            self.files[fname] = self.trace_body("speed")
            el.attrs["speed_file"] = fname
            self.speed_traced.add(name)
        self.hosts.append(name)
        self.host_elems.append((el, parent))
        return el

    def coords(self):
        r = self.rng
        return " ".join([f"{r.uniform(-500, 500):.2f}", f"{r.uniform(-500, 500):.2f}", f"{r.uniform(0, 50):.2f}"])

    def budget(self):
        return MAX_HOSTS - len(self.hosts)

    # -- zones ----------------------------------------------------------------------------------
    def leaf_zone(self, zid, routing, nhosts, need_gw):
        """A zone of hosts, routers and links; returns (element, gateway name)."""
        r = self.rng
        z = E("zone", {"id": zid, "routing": routing})
        self.zone_ids.append(zid)
        if r.random() < 0.15:
            z.add(E("prop", {"id": "site", "value": zid}))
        nhosts = max(1, min(nhosts, self.budget()))
        if routing == "Vivaldi":
            hosts = [self.host(z, coordinates=True) for _ in range(nhosts)]
            z.add(*hosts)
            self.leaf_zones.append((z, "Vivaldi"))
            return z, hosts[0].attrs["id"]
        hosts = [self.host(z) for _ in range(nhosts)]
        z.add(*hosts)
        names = [h.attrs["id"] for h in hosts]
        if routing == "None":
            self.leaf_zones.append((z, "None"))
            return z, names[0]
        gw = None
        if need_gw:
            if r.random() < 0.6 or (len(names) == 1 and routing != "Cluster"):
                gw = self.uid("gw")
                z.add(E("router", {"id": gw}))
                self.routers.append(gw)
                names.append(gw)
            else:
                gw = names[0]
        self.leaf_zones.append((z, routing))
        if routing == "Cluster":
            links, host_links = [], []
            for n in names:
                if n in self.routers:
                    continue
                policy = r.choice(["SPLITDUPLEX", "SPLITDUPLEX", "SHARED", "FATPIPE"])
                link = self.new_link(z, policy, lid=n + "_nic")
                links.append(link)
                lid = link.attrs["id"]
                up, down = (lid + "_UP", lid + "_DOWN") if policy == "SPLITDUPLEX" else (lid, lid)
                host_links.append(E("host_link", {"id": n, "up": up, "down": down}))
            z.add(*links)
            if r.random() < 0.6:
                bb = E("backbone", {"id": self.uid("bb"), "bandwidth": self.bandwidth(), "latency": self.latency()})
                self.numbers += [(bb, "bandwidth", "bw"), (bb, "latency", "lat")]
                z.add(bb)
            z.add(*host_links)
            self.add_traces(z, [n for n in names if n not in self.routers], [])
            return z, gw
        # graph routings: a route per edge
        edges = []
        if routing == "Full":
            edges = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
        else:
            centre = names[-1] if gw in self.routers else names[0]
            if r.random() < 0.5:
                edges = [(n, centre) for n in names if n != centre]
            else:   # a chain
                edges = list(zip(names, names[1:]))
            if len(names) >= 3 and r.random() < 0.3:
                a, b = r.sample(names, 2)
                if (a, b) not in edges and (b, a) not in edges:
                    edges.append((a, b))
        links, routes = [], []
        shared = self.new_link(z) if r.random() < 0.3 else None
        if shared is not None:
            links.append(shared)
        for a, b in edges:
            ctns = []
            if shared is None or r.random() < 0.5:
                link = self.new_link(z)
                links.append(link)
                ctns.append(link.attrs["id"])
            if shared is not None:
                ctns.append(shared.attrs["id"])
            if r.random() < 0.2 and routing != "Full":
                # two one-way routes
                routes.append(E("route", {"src": a, "dst": b, "symmetrical": "NO"},
                                [self.link_ctn(c) for c in ctns]))
                routes.append(E("route", {"src": b, "dst": a, "symmetrical": r.choice(["NO", "no"])},
                                [self.link_ctn(c, True) for c in reversed(ctns)]))
            else:
                routes.append(E("route", {"src": a, "dst": b}, [self.link_ctn(c) for c in ctns]))
        z.add(*links)
        self.add_traces(z, [n for n in names if n not in self.routers], [l.attrs["id"] for l in links])
        if routing == "Full" and len(hosts) >= 2 and r.random() < 0.15:
            a, b = hosts[0].attrs["id"], hosts[1].attrs["id"]
            link = self.new_link(z, "SHARED")
            z.children.insert(z.children.index(links[0]) if links else len(z.children), link)
            routes.append(E("bypassRoute", {"src": a, "dst": b}, [self.link_ctn(link.attrs["id"])]))
        z.add(*routes)
        for rt in routes:
            self.routes.append((rt, z))
        return z, gw

    def add_traces(self, zone, hosts, links):
        """Inline <trace> and <trace_connect kind="SPEED"> for a host of the zone, sometimes."""
        r = self.rng
        hosts = [h for h in hosts if h not in self.speed_traced]
        if not hosts or r.random() > 0.12:
            return
        tid = self.uid("tr")
        body = self.trace_body("speed", inline=True)
        last = float(body.strip().splitlines()[-1].split()[0])
        period = r.choice(["0", f"{last + r.choice([1, 10]):g}"])
        text = body if r.random() < 0.5 else "\n" + body
        zone.add(E("trace", {"id": tid, "periodicity": period}, text=text))
        self.numbers.append((zone.children[-1], "periodicity", "time"))
        self.traces.append(tid)
        host = r.choice(hosts)
        self.speed_traced.add(host)
        zone.add(E("trace_connect", {"kind": "SPEED", "trace": tid, "element": host}))

    def peers_zone(self, zid, npeers):
        r = self.rng
        z = E("zone", {"id": zid, "routing": "Vivaldi"})
        self.zone_ids.append(zid)
        npeers = max(1, min(npeers, self.budget()))
        for _ in range(npeers):
            pid = self.uid("peer")
            attrs = {"id": pid, "speed": self.speed(), "bw_in": self.bandwidth(), "bw_out": self.bandwidth()}
            attrs["coordinates"] = self.coords()
            el = E("peer", attrs)
            self.numbers += [(el, "speed", "speed"), (el, "bw_in", "bw"), (el, "bw_out", "bw"),
                             (el, "coordinates", "coords")]
            z.add(el)
            self.hosts.append(pid)
        self.leaf_zones.append((z, "peers"))
        return z, z.children[0].attrs["id"]

    def cluster(self, cid, max_hosts):
        """A <cluster>: flat, or a torus, fat tree or dragonfly; returns (element, gateway)."""
        r = self.rng
        max_hosts = max(1, min(max_hosts, self.budget()))
        topo = r.choices(["FLAT", "TORUS", "FAT_TREE", "DRAGONFLY"], [5, 2, 2, 2])[0]
        params, n = "", None
        for _ in range(20):
            if topo == "TORUS":
                dims = [r.choice([2, 2, 3, 4]) for _ in range(r.randint(1, 3))]
                params, n = ",".join(map(str, dims)), _prod(dims)
            elif topo == "FAT_TREE":
                levels = r.randint(1, 2)
                down = [r.choice([2, 3, 4]) for _ in range(levels)]
                up = [1] + [r.choice([1, 2]) for _ in range(levels - 1)]
                count = [r.choice([1, 2]) for _ in range(levels)]
                params = f"{levels};{','.join(map(str, down))};{','.join(map(str, up))};{','.join(map(str, count))}"
                n = _prod(down)
            elif topo == "DRAGONFLY":
                blades = r.choice([1, 2, 3])
                groups = r.randint(1, blades)
                chassis = r.choice([1, 2])
                nodes = r.choice([1, 2])
                params = f"{groups},1;{chassis},1;{blades},1;{nodes}"
                n = groups * chassis * blades * nodes
            else:
                n = r.randint(1, 8)
            if n <= max_hosts:
                break
        else:
            topo, params, n = "FLAT", "", max(1, min(4, max_hosts))
        prefix = r.choice([f"{cid}-", f"{cid}.n", f"{cid}node", f"n{cid}-"])
        suffix = r.choice(["", "", ".grid", "-x"])
        start = r.choice([0, 0, 1, 10])
        if n > 1 and r.random() < 0.3:
            cut = start + r.randint(0, n - 2)
            radical = f"{start}-{cut},{cut + 1}-{start + n - 1}"
        elif n == 1:
            radical = str(start)
        else:
            radical = f"{start}-{start + n - 1}"
        attrs = {"id": cid, "prefix": prefix, "suffix": suffix, "radical": radical, "speed": self.speed()}
        if r.random() < 0.4:
            attrs["core"] = str(r.choice([1, 2, 4, 16]))
        attrs["bw"] = self.bandwidth()
        attrs["lat"] = self.latency()
        if r.random() < 0.4:
            attrs["sharing_policy"] = r.choice(["SHARED", "SPLITDUPLEX", "FATPIPE"])
        if topo != "FLAT" or r.random() < 0.1:
            attrs["topology"] = topo
            attrs["topo_parameters"] = params
        if topo == "FLAT" and r.random() < 0.5:
            attrs["bb_bw"] = self.bandwidth()
            attrs["bb_lat"] = self.latency()
            if r.random() < 0.3:
                attrs["bb_sharing_policy"] = r.choice(["SHARED", "FATPIPE"])
        if r.random() < 0.3:
            attrs["loopback_bw"] = self.bandwidth()
            attrs["loopback_lat"] = self.latency()
        if topo in ("FLAT", "TORUS") and r.random() < 0.2:
            attrs["limiter_link"] = self.bandwidth()
        router = None
        if topo == "FLAT" and r.random() < 0.5:
            router = self.uid("rt")
            attrs["router_id"] = router
        el = E("cluster", attrs)
        if r.random() < 0.15:
            el.add(E("prop", {"id": "wattage_per_state", "value": "100:200"}))
        self.numbers += [(el, "speed", "speed"), (el, "bw", "bw"), (el, "lat", "lat"), (el, "radical", "radical")]
        for k, kind in (("core", "int"), ("bb_bw", "bw"), ("bb_lat", "lat"), ("loopback_bw", "bw"),
                        ("loopback_lat", "lat"), ("limiter_link", "bw"), ("topo_parameters", "topo")):
            if k in attrs:
                self.numbers.append((el, k, kind))
        names = [f"{prefix}{i}{suffix}" for i in range(start, start + n)]
        self.hosts.extend(names)
        self.zone_ids.append(cid)
        gw = router if router else r.choice(names)
        return el, gw

    def internal_zone(self, zid, routing, depth):
        """A zone of zones and clusters joined by zoneRoutes; returns (element, gateway)."""
        r = self.rng
        z = E("zone", {"id": zid, "routing": routing})
        self.zone_ids.append(zid)
        self.internal_zones.append(z)
        if r.random() < 0.1:
            z.add(E("prop", {"id": "site", "value": "x"}))
        nchild = r.randint(2, 3)
        kids = []   # (child id, gateway)
        for _ in range(nchild):
            if self.budget() <= 0:
                break
            kind = r.choices(["leaf", "cluster", "vivaldi", "none", "internal", "peers"],
                             [6, 4, 1, 0.4, 1 if depth < 1 else 0, 0.6])[0]
            cid = self.uid(r.choice(["z", "site-", "zone_", "c"]))
            if kind == "leaf":
                el, gw = self.leaf_zone(cid, r.choice(GRAPH_ROUTINGS + ["Cluster"]), r.randint(1, 5), True)
            elif kind == "cluster":
                el, gw = self.cluster(cid, 16)
                self.clusters.append((el, z))
            elif kind == "vivaldi":
                el, gw = self.leaf_zone(cid, "Vivaldi", r.randint(1, 4), True)
            elif kind == "none":
                el, gw = self.leaf_zone(cid, "None", 1, True)
            elif kind == "peers":
                el, gw = self.peers_zone(cid, r.randint(1, 4))
            else:
                el, gw = self.internal_zone(cid, r.choice(GRAPH_ROUTINGS), depth + 1)
            self.gateways[cid] = gw
            z.add(el)
            kids.append((cid, gw))
        if len(kids) < 2:
            return z, kids[0][1] if kids else None
        pairs = [(a, b) for i, a in enumerate(kids) for b in kids[i + 1:]]
        if routing != "Full" and r.random() < 0.6:
            pairs = list(zip(kids, kids[1:]))   # a chain: routes found through the middle zones
        links, routes = [], []
        for (a, ga), (b, gb) in pairs:
            link = self.new_link(z)
            links.append(link)
            attrs = {"src": a, "dst": b, "gw_src": ga, "gw_dst": gb}
            ctn = [self.link_ctn(link.attrs["id"])]
            if r.random() < 0.15:
                routes.append(E("zoneRoute", dict(attrs, symmetrical="NO"), ctn))
                routes.append(E("zoneRoute", {"src": b, "dst": a, "gw_src": gb, "gw_dst": ga, "symmetrical": "NO"},
                                [self.link_ctn(link.attrs["id"], True)]))
            else:
                routes.append(E("zoneRoute", attrs, ctn))
        z.add(*links)
        z.add(*routes)
        for rt in routes:
            self.routes.append((rt, z))
        return z, kids[0][1]

    def config(self):
        r = self.rng
        items = [("network/crosstraffic", r.choice(["0", "1"])), ("network/TCP-gamma", "4194304"),
                 ("network/latency-factor", "13.01"), ("network/bandwidth-factor", "0.97"),
                 ("network/weight-S", "20537"), ("maxmin/precision", "1e-5"), ("surf/precision", "1e-9"),
                 ("network/model", r.choice(["CM02", "LV08", "SMPI"])), ("cpu/optim", r.choice(["Full", "Lazy"])),
                 ("network/optim", r.choice(["Full", "Lazy"])), ("network/loopback-bw", "1e10"),
                 ("network/loopback-lat", "1e-6")]
        chosen = r.sample(items, r.randint(1, 3))
        return E("config", {"id": "General"} if r.random() < 0.5 else {},
                 [E("prop", {"id": k, "value": v}) for k, v in chosen])

    def generate(self):
        r = self.rng
        if r.random() < 0.25:
            self.root.add(self.config())
        shape = r.choices(["leaf", "cluster", "hier", "vivaldi", "peers"], [4, 3, 6, 1, 1])[0]
        rid = self.uid(r.choice(["world", "root", "AS", "grid"]))
        if shape == "leaf":
            el, _ = self.leaf_zone(rid, r.choice(GRAPH_ROUTINGS + ["Cluster"]), r.randint(2, 6), False)
        elif shape == "cluster":
            el, _ = self.cluster(rid, 32)
            self.clusters.append((el, self.root))
        elif shape == "vivaldi":
            el, _ = self.leaf_zone(rid, "Vivaldi", r.randint(2, 6), False)
        elif shape == "peers":
            el, _ = self.peers_zone(rid, r.randint(2, 5))
        else:
            el, _ = self.internal_zone(rid, r.choice(GRAPH_ROUTINGS), 0)
        self.root.add(el)
        self.shape = shape
        free = [el.attrs["id"] for el, _ in self.host_elems
                if el.tag == "host" and el.attrs["id"] not in self.speed_traced]
        if r.random() < 0.05 and free:
            # a platform-level trace, after the root zone
            tid = self.uid("ptr")
            self.root.add(E("trace", {"id": tid, "periodicity": "0"}, text="0 1\n2 0.5\n"))
            self.traces.append(tid)
            host = r.choice(free)
            self.speed_traced.add(host)
            self.root.add(E("trace_connect", {"kind": "SPEED", "trace": tid, "element": host}))

    def text(self):
        t = serialise(self.root, self.style, self.header, self.doctype)
        for edit in self.text_edits:
            t = edit(t)
        return t


def _prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


# --------------------------------------------------------------------------------------------
# Perturbations: each takes (platform, rng), mutates it and returns a label, or None when it
# does not apply to this platform.
# --------------------------------------------------------------------------------------------

BAD_NUMBERS = ["0", "-1", "1e400", "-1e400", "nan", "NaN", "inf", "-inf", "1e308", "1e-400", "", " ", "1e",
               "0x10", "1,5", "1.2.3", "+1", "--1", "99999999999999999999999", "4294967297", "2147483648", "-0",
               "1_000", "١", "1e-320"]
UNITS = {"speed": ["f", "Gf", "Mf", "kf"], "bw": ["Bps", "GBps", "Mbps"], "lat": ["s", "us", "ms"],
         "time": ["", "s"], "int": [""], "coords": [""], "radical": [""], "topo": [""]}
WRONG_UNITS = {"speed": ["1GBps", "1Gflop", "1 Gf", "1Gx", "1GHz", "1gf", "1Gf ", "Gf", "1e9flop/s", "1GiF"],
               "bw": ["1Gf", "1GB", "1KBps", "1Gbit", "1 GBps", "1gbps", "10Gb/s", "GBps", "1e9 Bps"],
               "lat": ["1GBps", "1 ms", "1MS", "1usec", "1µs", "ms", "1f", "1e-3 s"]}


def _pick_number(p, rng, kinds=None):
    cands = [(el, a, k) for el, a, k in p.numbers if a in el.attrs and (kinds is None or k in kinds)]
    return rng.choice(cands) if cands else None


def pert_bad_number(p, rng):
    pick = _pick_number(p, rng)
    if not pick:
        return None
    el, attr, kind = pick
    bad = rng.choice(BAD_NUMBERS)
    if kind == "coords":
        parts = el.attrs[attr].split()
        parts[rng.randrange(len(parts))] = bad or "x"
        value = " ".join(parts)
    elif kind == "topo":
        parts = re.split(r"([;,])", el.attrs[attr])
        idx = [i for i, s in enumerate(parts) if s not in (";", ",")]
        parts[rng.choice(idx)] = bad
        value = "".join(parts)
    elif kind == "radical":
        value = rng.choice([f"0-{bad}", f"{bad}-3", bad])
    else:
        unit = rng.choice(UNITS[kind]) if bad.strip() and rng.random() < 0.6 else ""
        value = bad + unit
    el.attrs[attr] = value
    return f"bad_number({el.tag}.{attr}={value!r})"


def _random_host(p, rng):
    """One <host> element of the platform, or None."""
    hosts = [el for el, _ in p.host_elems if el.tag == "host"]
    return rng.choice(hosts) if hosts else None


def _rewrite_trace(p, rng, body, label):
    """One inline <trace> of the platform written with `body` as its text; None without one."""
    traces = [el for el, _ in p.root.walk() if el.tag == "trace"]
    if not traces:
        return None
    t = rng.choice(traces)
    t.raw = f'<trace id="{t.attrs["id"]}" periodicity="0">{body}</trace>'
    return label


def _replace_number(p, rng, label, value_of):
    """A speed, bandwidth or latency attribute set to value_of(kind); None where there is none."""
    pick = _pick_number(p, rng, {"speed", "bw", "lat"})
    if not pick:
        return None
    el, attr, kind = pick
    el.attrs[attr] = value_of(kind)
    return f"{label}({el.tag}.{attr}={el.attrs[attr]!r})"


def pert_wrong_unit(p, rng):
    return _replace_number(p, rng, "wrong_unit", lambda kind: rng.choice(WRONG_UNITS[kind]))


def pert_unitless(p, rng):
    # The latency is drawn whatever the kind, so that a seed gives the cases it always gave.
    return _replace_number(p, rng, "unitless",
                           lambda kind: {"speed": "1e9", "bw": "125000000", "lat": rng.choice(["1e-5", "0.001"])}[kind])


def _leaf_insert(zone, el, after_tag=None):
    """Insert el among the first group of a leaf zone (after its props and hosts)."""
    idx = 0
    for i, c in enumerate(zone.children):
        if c.tag in ("prop",) or (after_tag and c.tag == after_tag):
            idx = i + 1
    zone.children.insert(idx, el)


def pert_duplicate_id(p, rng):
    opts = []
    if p.host_elems:
        opts.append("host")
    if p.links:
        opts.append("link")
    if len(p.zone_ids) > 1:
        opts.append("zone")
    if p.routers and p.host_elems:
        opts.append("router")
    if p.clusters and p.host_elems:
        opts.append("cluster_host")
    if p.host_elems and p.zone_ids:
        opts.append("host_as_zone")
    if not opts:
        return None
    what = rng.choice(opts)
    if what == "host":
        el, parent = rng.choice(p.host_elems)
        copy = E("host", dict(el.attrs, speed="1Gf"))
        target = rng.choice([parent] + [z for z, k in p.leaf_zones if k not in ("peers",)])
        _leaf_insert(target, copy, "host")
        return f"duplicate_id(host {el.attrs['id']!r})"
    if what == "link":
        lid = rng.choice(sorted(p.links))
        el, parent, _ = p.links[lid]
        parent.children.insert(parent.children.index(el) + 1, E("link", dict(el.attrs)))
        return f"duplicate_id(link {lid!r})"
    if what == "zone":
        a, b = rng.sample(p.zone_ids, 2)
        for el, _ in p.root.walk():
            if el.tag in ("zone", "cluster") and el.attrs.get("id") == a:
                el.attrs["id"] = b
                for rt, _ in p.routes:   # keep the zone routes naming it
                    for k in ("src", "dst"):
                        if rt.attrs.get(k) == a:
                            rt.attrs[k] = b
                return f"duplicate_id(zone {a!r} renamed {b!r})"
        return None
    if what == "router":
        host = rng.choice(p.host_elems)[0].attrs["id"]
        zone = rng.choice([z for z, k in p.leaf_zones if k not in ("peers",)] or [None])
        if zone is None:
            return None
        _leaf_insert(zone, E("router", {"id": host}), "host")
        return f"duplicate_id(router named like host {host!r})"
    if what == "cluster_host":
        cl = rng.choice(p.clusters)[0]
        start = re.split(r"[-,]", cl.attrs["radical"])[0]
        name = f"{cl.attrs['prefix']}{start}{cl.attrs['suffix']}"
        zones = [z for z, k in p.leaf_zones if k not in ("peers",)]
        if not zones:
            return None
        _leaf_insert(rng.choice(zones), E("host", {"id": name, "speed": "1Gf"}), "host")
        return f"duplicate_id(host named like cluster host {name!r})"
    el, parent = rng.choice(p.host_elems)
    zid = rng.choice(p.zone_ids)
    old = el.attrs["id"]
    el.attrs["id"] = zid
    _rename_refs(p, old, zid)
    return f"duplicate_id(host {old!r} renamed like zone {zid!r})"


def _rename_refs(p, old, new):
    for el, _ in p.root.walk():
        for k in ("src", "dst", "gw_src", "gw_dst", "element", "id"):
            if el.tag in ("route", "zoneRoute", "bypassRoute", "trace_connect", "host_link") and el.attrs.get(k) == old:
                el.attrs[k] = new
    if old in p.hosts:
        p.hosts[p.hosts.index(old)] = new


def _route_elems(p, tags=("route", "zoneRoute", "bypassRoute")):
    return [(rt, z) for rt, z in p.routes if rt.tag in tags and rt in z.children]


def pert_missing_reference(p, rng):
    routes = _route_elems(p)
    opts = []
    if routes:
        opts += ["link_ctn", "endpoint", "gateway"]
    if any(c.tag == "host_link" for z, _ in p.leaf_zones for c in z.children):
        opts.append("host_link")
    if any(c.tag == "trace_connect" for el, _ in p.root.walk() for c in el.children):
        opts.append("trace_connect")
    if not opts:
        return None
    what = rng.choice(opts)
    ghost = rng.choice(["ghost", "nowhere-1", "", "h", "L"])
    if what == "link_ctn":
        rt, _ = rng.choice(routes)
        if not rt.children:
            return None
        ctn = rng.choice(rt.children)
        old = ctn.attrs["id"]
        ctn.attrs["id"] = rng.choice([ghost, old + "_UP", old + "_DOWN", old.upper()])
        return f"missing_reference(link_ctn {old!r}->{ctn.attrs['id']!r})"
    if what == "endpoint":
        rt, _ = rng.choice(routes)
        k = rng.choice(["src", "dst"])
        rt.attrs[k] = ghost
        return f"missing_reference({rt.tag}.{k}={ghost!r})"
    if what == "gateway":
        zr = [(rt, z) for rt, z in routes if rt.tag == "zoneRoute"]
        if not zr:
            return None
        rt, _ = rng.choice(zr)
        k = rng.choice(["gw_src", "gw_dst"])
        rt.attrs[k] = ghost
        return f"missing_reference(zoneRoute.{k}={ghost!r})"
    if what == "host_link":
        hls = [c for z, _ in p.leaf_zones for c in z.children if c.tag == "host_link"]
        hl = rng.choice(hls)
        k = rng.choice(["id", "up", "down"])
        hl.attrs[k] = ghost
        return f"missing_reference(host_link.{k}={ghost!r})"
    tcs = [c for el, _ in p.root.walk() for c in el.children if c.tag == "trace_connect"]
    tc = rng.choice(tcs)
    k = rng.choice(["trace", "element"])
    tc.attrs[k] = ghost
    return f"missing_reference(trace_connect.{k}={ghost!r})"


def pert_wrong_direction(p, rng):
    ctns = [c for rt, _ in _route_elems(p) for c in rt.children if c.tag == "link_ctn"]
    if not ctns:
        return None
    ctn = rng.choice(ctns)
    lid = ctn.attrs["id"]
    policy = p.links.get(lid, (None, None, "SHARED"))[2]
    if policy == "SPLITDUPLEX" and rng.random() < 0.6:
        v = rng.choice([None, "NONE", "BOTH", "up"])
    else:
        v = rng.choice(["UP", "DOWN", "BOTH", "down", ""])
    if v is None:
        ctn.attrs.pop("direction", None)
    else:
        ctn.attrs["direction"] = v
    return f"wrong_direction({policy} link {lid!r} direction={v!r})"


def pert_empty_route(p, rng):
    routes = [(rt, z) for rt, z in _route_elems(p) if rt.children]
    if not routes:
        return None
    rt, _ = rng.choice(routes)
    rt.children = []
    return f"empty_route({rt.tag} {rt.attrs.get('src')}->{rt.attrs.get('dst')})"


def pert_missing_attribute(p, rng):
    req = {"host": ["id", "speed"], "link": ["id", "bandwidth", "latency"], "route": ["src", "dst"],
           "zone": ["id", "routing"], "cluster": ["id", "prefix", "suffix", "radical", "speed", "bw", "lat"],
           "zoneRoute": ["src", "dst", "gw_src", "gw_dst"], "link_ctn": ["id"], "trace": ["id", "periodicity"],
           "trace_connect": ["trace", "element", "kind"], "host_link": ["id", "up", "down"],
           "peer": ["id", "speed", "bw_in", "bw_out"], "prop": ["id", "value"], "backbone": ["id", "bandwidth", "latency"],
           "router": ["id"], "platform": ["version"], "bypassRoute": ["src", "dst"]}
    cands = [(el, a) for el, _ in p.root.walk() for a in req.get(el.tag, []) if a in el.attrs]
    if not cands:
        return None
    el, a = rng.choice(cands)
    del el.attrs[a]
    return f"missing_attribute({el.tag} without {a})"


def pert_whitespace(p, rng):
    p.style = Style(rng)
    return "whitespace(valid: attribute separators, quotes, blank lines" + (
        ", CRLF)" if p.style.newline != "\n" else ")")


def pert_padded_value(p, rng):
    cands = [(el, a) for el, _ in p.root.walk() for a in el.attrs if el.tag != "platform"]
    el, a = rng.choice(cands)
    el.attrs[a] = rng.choice([" ", "\t", "\n"]) + el.attrs[a] + rng.choice(["", " "])
    return f"padded_value({el.tag}.{a}={el.attrs[a]!r})"


def pert_gateway_wrong_zone(p, rng):
    zr = [(rt, z) for rt, z in _route_elems(p, ("zoneRoute",))]
    if not zr:
        return None
    rt, z = rng.choice(zr)
    other = [h for h in p.hosts + p.routers if h not in (rt.attrs.get("gw_src"), rt.attrs.get("gw_dst"))]
    k = rng.choice(["gw_src", "gw_dst"])
    how = rng.choice(["swap", "other", "zone"])
    if how == "swap":
        rt.attrs["gw_src"], rt.attrs["gw_dst"] = rt.attrs["gw_dst"], rt.attrs["gw_src"]
        return "gateway_wrong_zone(gw_src and gw_dst swapped)"
    if how == "zone":
        rt.attrs[k] = rt.attrs["src" if k == "gw_src" else "dst"]
        return f"gateway_wrong_zone({k} names a zone {rt.attrs[k]!r})"
    if not other:
        return None
    rt.attrs[k] = rng.choice(other)
    return f"gateway_wrong_zone({k}={rt.attrs[k]!r})"


def pert_second_root(p, rng):
    r = rng
    if r.random() < 0.5:
        el = E("zone", {"id": "second", "routing": r.choice(["Full", "None"])}, [E("host", {"id": "lonely", "speed": "1Gf"})])
    else:
        el = E("cluster", {"id": "second", "prefix": "s-", "suffix": "", "radical": "0-1", "speed": "1Gf",
                           "bw": "1GBps", "lat": "1us"})
    if r.random() < 0.3:
        p.root.children.insert(len([c for c in p.root.children if c.tag == "config"]), el)
    else:
        p.root.add(el)
    return f"second_root(<{el.tag}>)"


def pert_foreign_route(p, rng):
    leafs = [(z, k) for z, k in p.leaf_zones if k in GRAPH_ROUTINGS]
    if not leafs or len(p.hosts) < 2:
        return None
    z, k = rng.choice(leafs)
    mine = [c.attrs["id"] for c in z.children if c.tag == "host"]
    other = [h for h in p.hosts if h not in mine]
    if not mine or not other:
        return None
    link = p.new_link(z, "SHARED")
    _leaf_insert(z, link, "host")
    rt = E("route", {"src": rng.choice(mine), "dst": rng.choice(other)}, [E("link_ctn", {"id": link.attrs["id"]})])
    z.add(rt)
    return f"foreign_route({k} zone route to {rt.attrs['dst']!r} of another zone)"


def pert_routing(p, rng):
    zones = [el for el, _ in p.root.walk() if el.tag == "zone"]
    if not zones:
        return None
    z = rng.choice(zones)
    old = z.attrs.get("routing")
    z.attrs["routing"] = rng.choice(["Bogus", "full", "RuleBased", "Wifi", "Star", "", "Cluster", "None", "Vivaldi",
                                     "Floyd", "Dijkstra", "ClusterTorus", "Fat_Tree", "DijkstraCache"])
    return f"routing({old}->{z.attrs['routing']})"


def _random_topo(rng):
    t = rng.choice(["TORUS", "FAT_TREE", "DRAGONFLY"])
    v = lambda: str(rng.choice([0, 1, 1, 2, 2, 3, 4, 5]))
    if t == "TORUS":
        s = ",".join(v() for _ in range(rng.randint(1, 4)))
    elif t == "FAT_TREE":
        lv = rng.randint(0, 3)
        grp = lambda: ",".join(v() for _ in range(max(1, lv + rng.choice([0, 0, 0, 1, -1]))))
        s = f"{lv};{grp()};{grp()};{grp()}"
    else:
        s = f"{v()},{v()};{v()},{v()};{v()},{v()};{v()}"
    if rng.random() < 0.15:
        s = rng.choice([s + ";", s.replace(";", ",", 1), s.replace(",", ";", 1), " " + s, s + "x"])
    return t, s


def _topo_hosts(t, s):
    try:
        if t == "TORUS":
            return _prod(int(x) for x in s.split(","))
        if t == "FAT_TREE":
            return _prod(int(x) for x in s.split(";")[1].split(","))
        parts = s.split(";")
        return _prod([int(parts[0].split(",")[0]), int(parts[1].split(",")[0]), int(parts[2].split(",")[0]),
                      int(parts[3])])
    except (ValueError, IndexError):
        return None


def pert_topology(p, rng):
    if not p.clusters:
        return None
    cl = rng.choice(p.clusters)[0]
    t, s = _random_topo(rng)
    cl.attrs["topology"] = t
    cl.attrs["topo_parameters"] = s
    n = _topo_hosts(t, s)
    if n and 0 < n <= MAX_HOSTS and rng.random() < 0.8:
        cl.attrs["radical"] = f"0-{n - 1}"     # only the topology is fuzzed
    for k in ("bb_bw", "bb_lat", "router_id"):
        if rng.random() < 0.8:
            cl.attrs.pop(k, None)
    return f"topology({t} {s!r}, radical {cl.attrs['radical']!r})"


def pert_radical(p, rng):
    if not p.clusters:
        return None
    cl = rng.choice(p.clusters)[0]
    cl.attrs["radical"] = rng.choice(["0-3,2-5", "5-2", "0--3", "a-b", "0-", "", "3", "0-3,", "-1-3", "0-3,,4",
                                      " 0-3", "0-3 ", "1-1", "0-0,0-0", "00-03", "0-63", "7,3,5", "+1-+3"])
    return f"radical({cl.attrs['radical']!r})"


def pert_trace(p, rng):
    r = rng
    zones = [z for z, k in p.leaf_zones if k in GRAPH_ROUTINGS + ["Cluster", "Vivaldi"]]
    hosts_el = [(el, par) for el, par in p.host_elems if el.tag == "host"]
    what = r.choice(["inline", "inline", "file", "file", "connect_kind", "dup", "second_speed"])
    if what == "second_speed" and zones:
        z = r.choice(zones)
        hosts = [c.attrs["id"] for c in z.children if c.tag == "host"]
        if not hosts:
            return None
        host = r.choice(sorted(p.speed_traced & set(hosts)) or hosts)
        n = 1 if host in p.speed_traced else 2
        for _ in range(n):
            tid = p.uid("tr2_")
            z.add(E("trace", {"id": tid, "periodicity": "0"}, text="0 1\n1 0.5\n"),
                  E("trace_connect", {"kind": "SPEED", "trace": tid, "element": host}))
        return f"trace(a second speed trace for host {host!r})"
    if what in ("inline", "connect_kind", "dup") and zones:
        z = r.choice(zones)
        # An earlier perturbation may have taken an element's id away.
        hosts = [c.attrs["id"] for c in z.children if c.tag == "host" and "id" in c.attrs]
        links = [c.attrs["id"] for c in z.children if c.tag == "link" and "id" in c.attrs]
        tid = p.uid("ftr")
        body = r.choice(["0 1\n5 0.5\n", "0 1\n5 0.5\n2 1\n", "0 -1\n", "0 0\n", "abc def\n", "0\n", "", "0 1 2\n",
                         "0 nan\n", "1e400 1\n", "0 1e400\n", "0 1\n0 0.5\n", "-5 1\n", "0 1\n\n\n5 0.5\n",
                         "  0   1  \n\t5\t0.5\n", "PERIODICITY 1\n0 1\n", "0 1;\n", "0,1\n"])
        period = r.choice(["0", "10", "-1", "abc", "", "1e400", "nan", "0.0001", "1e9", "5"])
        kind = "SPEED"
        element = r.choice(hosts) if hosts else "ghost"
        if what == "connect_kind":
            kind = r.choice(["BANDWIDTH", "LATENCY", "SPEED", "HOST_AVAIL", "LINK_AVAIL", "speed", "POWER"])
            element = r.choice((links if kind in ("SPEED", "HOST_AVAIL") else hosts) or ["ghost"])
            body, period = "0 1\n5 0.5\n", "0"
        trace = E("trace", {"id": tid, "periodicity": period}, text=body)
        conn = E("trace_connect", {"kind": kind, "trace": tid, "element": element})
        z.add(trace, conn)
        if what == "dup":
            z.add(E("trace", {"id": tid, "periodicity": "0"}, text="0 1\n"))
            return f"trace(duplicate trace id {tid!r})"
        return f"trace(inline periodicity={period!r} body={body!r} kind={kind} element={element!r})"
    if what == "file" or not zones:
        if not hosts_el and not p.links:
            return None
        body = r.choice(["0 1\n5 0.5\n2 1\n", "0 -1\n", "0 0\n", "", "garbage\n", "0 1 2\n", "PERIODICITY -1\n0 1\n",
                         "PERIODICITY 0\n0 1\n", "LOOPAFTER 1\n0 1\n", "LOOPAFTER -1\n0 1\n", "# comment\n0 1\n",
                         "0 1\r\n5 0.5\r\n", "WAITFOR 3\n0 1\n", "1e400 1\n", "0 1e400\n", "0 nan\n",
                         "0 1\n5 0.5", "\n\n0 1\n", "PERIODICITY 5\n0 1\n10 0.5\n",
                         "PERIODICITY 10\nLOOPAFTER 2\n0 1\n5 0.5\n", "LOOPAFTER 2\nPERIODICITY 10\n0 1\n"])
        fname = p.uid("ft_") + ".txt"
        how = r.choice(["write", "write", "write", "missing", "dir", "subdir"])
        ref = fname
        if how == "write":
            p.files[fname] = body
        elif how == "subdir":
            p.files["sub/" + fname] = body
            ref = r.choice(["sub/" + fname, "sub/../sub/" + fname, "./sub/" + fname])
        elif how == "dir":
            ref = r.choice([".", "sub/", "/"])
            p.files["sub/keep.txt"] = "0 1\n"
        if hosts_el and (not p.links or r.random() < 0.6):
            el = r.choice(hosts_el)[0]
            attr = "speed_file"
        else:
            el = r.choice(list(p.links.values()))[0]
            attr = r.choice(["bandwidth_file", "bandwidth_file", "latency_file"])
            if attr == "bandwidth_file" and body == "0 1\n5 0.5\n2 1\n":
                body = "0 1e9\n5 5e8\n"
        el.attrs[attr] = ref
        return f"trace({el.tag}.{attr}={ref!r} ({how}) body={body!r})"
    return None


def pert_pstate(p, rng):
    hosts = [el for el, _ in p.host_elems if el.tag == "host"]
    if not hosts:
        return None
    h = rng.choice(hosts)
    n = len(h.attrs.get("speed", "").split(","))
    how = rng.choice(["index", "list"])
    if how == "index":
        h.attrs["pstate"] = rng.choice([str(n), str(n + 5), "-1", "1.5", "abc", "", "0.0", "1e9", "0x1"])
        return f"pstate({h.attrs['pstate']!r} with {n} speeds)"
    h.attrs["speed"] = rng.choice(["1Gf,,2Gf", "1Gf,", ",1Gf", "1Gf;2Gf", "1Gf, 2Gf", "1Gf,0f", "0f,1Gf",
                                   "1Gf," * 40 + "1Gf"])
    h.attrs["pstate"] = rng.choice(["0", "1"])
    return f"pstate(speed list {h.attrs['speed'][:30]!r}, pstate {h.attrs['pstate']})"


def pert_coordinates(p, rng):
    hosts = [el for el, _ in p.host_elems if el.tag in ("host", "peer")]
    if not hosts:
        return None
    h = rng.choice(hosts)
    h.attrs["coordinates"] = rng.choice(["1 2", "1 2 3 4", "nan 0 0", "1e400 0 0", "1,2,3", "", "a b c",
                                         "0 0 -1", "-1 -2 -3", " 1 2 3", "1 2 3 ", "1\t2\t3", "0 0 0",
                                         "1e8 1e8 1e8", "100000001 0 0"])
    return f"coordinates({h.tag} {h.attrs['coordinates']!r})"


def pert_host_link(p, rng):
    zones = [z for z, k in p.leaf_zones if k in GRAPH_ROUTINGS + ["Cluster", "Vivaldi", "None"]]
    if not zones:
        return None
    z = rng.choice(zones)
    hosts = [c.attrs["id"] for c in z.children if c.tag == "host"]
    if not hosts:
        return None
    hls = [c for c in z.children if c.tag == "host_link"]
    how = rng.choice(["add", "dup", "shared_halves", "half_of_shared"])
    if how == "dup" and hls:
        hl = rng.choice(hls)
        z.children.insert(z.children.index(hl) + 1, E("host_link", dict(hl.attrs)))
        return f"host_link(twice for {hl.attrs['id']!r})"
    link = p.new_link(z, "SPLITDUPLEX" if how != "half_of_shared" else "SHARED")
    lid = link.attrs["id"]
    _leaf_insert(z, link, "host")
    if how == "half_of_shared":
        up, down = lid + "_UP", lid + "_DOWN"
    elif how == "shared_halves":
        up, down = lid, lid
    else:
        up, down = lid + "_UP", lid + "_DOWN"
    hl = E("host_link", {"id": rng.choice(hosts), "up": up, "down": down})
    _leaf_insert(z, hl, "link")
    kind = [k for zz, k in p.leaf_zones if zz is z][0]
    return f"host_link({how} in a {kind} zone)"


def pert_duplicate_route(p, rng):
    routes = _route_elems(p, ("route", "zoneRoute"))
    if not routes:
        return None
    rt, z = rng.choice(routes)
    copy = E(rt.tag, dict(rt.attrs), [E(c.tag, dict(c.attrs)) for c in rt.children])
    if rng.random() < 0.5:
        copy.attrs["src"], copy.attrs["dst"] = rt.attrs.get("dst"), rt.attrs.get("src")
        if "gw_src" in copy.attrs:
            copy.attrs["gw_src"], copy.attrs["gw_dst"] = rt.attrs.get("gw_dst"), rt.attrs.get("gw_src")
        how = "reversed"
    else:
        how = "same"
    if rng.random() < 0.3:
        copy.attrs["symmetrical"] = "NO"
    z.children.insert(z.children.index(rt) + 1, copy)
    return f"duplicate_route({rt.tag} {how}, symmetrical={copy.attrs.get('symmetrical', 'YES')})"


def pert_self_route(p, rng):
    leafs = [(z, k) for z, k in p.leaf_zones if k in GRAPH_ROUTINGS]
    if not leafs:
        return None
    z, k = rng.choice(leafs)
    hosts = [c.attrs["id"] for c in z.children if c.tag in ("host", "router")]
    links = [c.attrs["id"] for c in z.children if c.tag == "link"]
    if not hosts or not links:
        return None
    h = rng.choice(hosts)
    lid = rng.choice(links)
    attrs = {"src": h, "dst": h}
    if rng.random() < 0.5:
        attrs["symmetrical"] = "NO"
    z.add(E("route", attrs, [p.link_ctn(lid)]))
    return f"self_route({k} zone, symmetrical={attrs.get('symmetrical', 'YES')})"


def pert_bypass(p, rng):
    r = rng
    if p.internal_zones and r.random() < 0.5:
        z = r.choice(p.internal_zones)
        kids = [c.attrs["id"] for c in z.children if c.tag in ("zone", "cluster")]
        links = [c.attrs["id"] for c in z.children if c.tag == "link"]
        if len(kids) < 2 or not links:
            return None
        a, b = r.sample(kids, 2)
        ga, gb = p.gateways.get(a, "ghost"), p.gateways.get(b, "ghost")
        if r.random() < 0.3:
            ga = r.choice(p.hosts)
        z.add(E("bypassZoneRoute", {"src": a, "dst": b, "gw_src": ga, "gw_dst": gb}, [p.link_ctn(r.choice(links))]))
        return "bypass(bypassZoneRoute)"
    leafs = [(z, k) for z, k in p.leaf_zones if k in GRAPH_ROUTINGS + ["Cluster"]]
    if not leafs:
        return None
    z, k = r.choice(leafs)
    ends = [c.attrs["id"] for c in z.children if c.tag in ("host", "router")]
    links = [c.attrs["id"] for c in z.children if c.tag == "link"]
    if len(ends) < 2 or not links:
        return None
    a, b = r.sample(ends, 2)
    if r.random() < 0.2:
        b = r.choice(p.hosts)
    ctns = [] if r.random() < 0.15 else [p.link_ctn(r.choice(links))]
    z.add(E("bypassRoute", {"src": a, "dst": b}, ctns))
    return f"bypass(bypassRoute in a {k} zone, {len(ctns)} links)"


def pert_config(p, rng):
    items = [("network/bogus", "1"), ("network/model", "Bogus"), ("network/crosstraffic", "maybe"),
             ("maxmin/precision", "-1"), ("surf/precision", "nan"), ("network/TCP-gamma", "-1"),
             ("contexts/stack-size", "16"), ("contexts/nthreads", "0"), ("network/model", "Constant"),
             ("host/model", "ptask_L07"), ("cpu/model", "Bogus"), ("plugin", "bogus"), ("exception/cutpath", "yes"),
             ("network/latency-factor", "abc"), ("network/bandwidth-factor", "0:1;bad"), ("cpu/optim", "TI"),
             ("network/optim", "Lazy"), ("cpu/maxmin-selective-update", "no"), ("network/weight-S", "1e400"),
             ("smpi/host-speed", "-1f"), ("path", "/nonexistent"), ("contexts/factory", "thread"),
             ("network/loopback-bw", "0"), ("network/loopback-lat", "-1s"), ("", "1"), ("debug/clean-atexit", "no"),
             ("tracing", "yes"), ("tracing/filename", "/proc/x.trace"), ("model-check", "1"),
             ("network/latency-factor", "1e400"), ("storage/max_file_descriptors", "0")]
    k, v = rng.choice(items)
    configs = [c for c in p.root.children if c.tag == "config"]
    prop = E("prop", {"id": k, "value": v})
    if configs:
        configs[0].add(prop)
    else:
        p.root.children.insert(0, E("config", {}, [prop]))
    if rng.random() < 0.1:   # config after the zones: out of the DTD's order
        cfg = [c for c in p.root.children if c.tag == "config"][0]
        p.root.children.remove(cfg)
        p.root.add(cfg)
        return f"config({k}={v!r}, after the zones)"
    return f"config({k}={v!r})"


def pert_order(p, rng):
    leafs = [z for z, k in p.leaf_zones if any(c.tag == "route" for c in z.children)]
    how = rng.choice(["route_first", "host_last", "zoneRoute_first", "prop_last"])
    if how in ("route_first", "host_last") and leafs:
        z = rng.choice(leafs)
        if how == "route_first":
            rt = [c for c in z.children if c.tag == "route"][0]
            z.children.remove(rt)
            z.children.insert(0, rt)
        else:
            h = [c for c in z.children if c.tag == "host"][0]
            z.children.remove(h)
            z.add(h)
        return f"order({how})"
    zs = [z for z in p.internal_zones if any(c.tag == "zoneRoute" for c in z.children)]
    if zs and how == "zoneRoute_first":
        z = rng.choice(zs)
        zr = [c for c in z.children if c.tag == "zoneRoute"][0]
        z.children.remove(zr)
        z.children.insert(0, zr)
        return "order(zoneRoute before the zones)"
    zones = [el for el, _ in p.root.walk() if el.tag == "zone" and len(el.children) > 1]
    if not zones:
        return None
    z = rng.choice(zones)
    z.add(E("prop", {"id": "late", "value": "1"}))
    return "order(prop after the zone's content)"


def pert_syntax(p, rng):
    how = rng.choice(["truncate", "entity", "dup_attr", "unknown_element", "unknown_attribute", "unicode", "cdata",
                      "no_doctype", "version", "deprecated_AS", "actor", "include", "cabinet", "storage", "bom",
                      "comment_in_trace", "peer_lat"])
    if how == "peer_lat":
        peers = [el for el, _ in p.root.walk() if el.tag == "peer"]
        if not peers:
            return None
        rng.choice(peers).attrs["lat"] = rng.choice(["1ms", "0", "-1s"])
        return "syntax(deprecated <peer lat=...>)"
    if how == "truncate":
        cut = rng.random()
        p.text_edits.append(lambda t: t[: max(60, int(len(t) * cut))])
        return f"syntax(truncated at {cut:.2f})"
    if how == "entity":
        el = rng.choice([el for el, _ in p.root.walk() if el.tag == "host"] or [p.root])
        el.raw = f'<host id="bad&bogus;" speed="1Gf"/>' if el.tag == "host" else None
        return "syntax(undefined entity)" if el.tag == "host" else None
    if how == "dup_attr":
        h = _random_host(p, rng)
        if h is None:
            return None
        h.raw = f'<host id="{h.attrs["id"]}" speed="1Gf" speed="2Gf"/>'
        return "syntax(attribute given twice)"
    if how == "unknown_element":
        zones = [z for z, k in p.leaf_zones if k != "peers"]
        if not zones:
            return None
        _leaf_insert(rng.choice(zones), E(rng.choice(["hostt", "Host", "switch", "disk"]), {"id": "x"}), "host")
        return "syntax(unknown element)"
    if how == "unknown_attribute":
        el = rng.choice([el for el, _ in p.root.walk() if el.tag != "platform"])
        el.attrs[rng.choice(["speeed", "Speed", "bandwith", "foo", "id2"])] = "1"
        return f"syntax(unknown attribute on {el.tag})"
    if how == "unicode":
        h = _random_host(p, rng)
        if h is None:
            return None
        new = rng.choice(["hôte-é", "a b", "x" * 300, "a/b", "h\u200b1", "<>", "a\"b", "&", "a'b", "-", ".", "0"])
        old = h.attrs["id"]
        h.attrs["id"] = new
        _rename_refs(p, old, new)
        return f"syntax(odd host name {new[:20]!r})"
    if how == "cdata":
        return _rewrite_trace(p, rng, "<![CDATA[0 1\n5 0.5\n]]>", "syntax(CDATA trace)")
    if how == "no_doctype":
        p.doctype = False
        p.header = rng.random() < 0.5
        return "syntax(no DOCTYPE)"
    if how == "version":
        p.root.attrs["version"] = rng.choice(["4", "3", "5", "4.1.0", "abc", "", "4.10", "1e400", "-4.1"])
        return f"syntax(version {p.root.attrs['version']!r})"
    if how == "deprecated_AS":
        for el, _ in p.root.walk():
            if el.tag == "zone":
                el.tag = "AS"
            elif el.tag == "zoneRoute":
                el.tag = "ASroute"
        return "syntax(deprecated <AS>/<ASroute>)"
    if how == "actor":
        if not p.hosts:
            return None
        p.root.add(E("actor", {"host": p.hosts[0], "function": "master"}, [E("argument", {"value": "1"})]))
        return "syntax(<actor> in the platform)"
    if how == "include":
        p.files["inc.xml"] = "<?xml version='1.0'?>\n<platform version=\"4.1\"/>\n"
        p.root.add(E("include", {"file": "inc.xml"}))
        return "syntax(<include>)"
    if how == "cabinet":
        zones = [z for z, k in p.leaf_zones if k in GRAPH_ROUTINGS + ["Cluster"]]
        if not zones:
            return None
        _leaf_insert(rng.choice(zones), E("cabinet", {"id": "cab", "prefix": "cab-", "suffix": "", "radical": "0-1",
                                                      "speed": "1Gf", "bw": "1GBps", "lat": "1us"}), "host")
        return "syntax(deprecated <cabinet>)"
    if how == "storage":
        zones = [z for z, k in p.leaf_zones if k in GRAPH_ROUTINGS + ["Cluster"]]
        if not zones:
            return None
        _leaf_insert(rng.choice(zones), E("storage_type", {"id": "st", "size": "1TB"}), "host")
        return "syntax(deprecated <storage_type>)"
    if how == "bom":
        p.text_edits.append(lambda t: "\ufeff" + t)
        return "syntax(byte order mark)"
    return _rewrite_trace(p, rng, "0 1<!-- c -->\n5 0.5\n", "syntax(comment inside trace text)")


def pert_zone_route_target(p, rng):
    zr = _route_elems(p, ("zoneRoute",))
    if not zr:
        return None
    rt, z = rng.choice(zr)
    k = rng.choice(["src", "dst"])
    how = rng.choice(["host", "grandchild", "self", "same"])
    if how == "host":
        rt.attrs[k] = p.gateways.get(rt.attrs[k]) or rng.choice(p.hosts)
    elif how == "self":
        rt.attrs[k] = z.attrs.get("id", "")
    elif how == "same":
        rt.attrs["dst"] = rt.attrs["src"]
        rt.attrs["gw_dst"] = rt.attrs["gw_src"]
    else:
        inner = [el.attrs["id"] for child in z.children if child.tag == "zone" for el, _ in child.walk()
                 if el is not child and el.tag in ("zone", "cluster")]
        if not inner:
            return None
        rt.attrs[k] = rng.choice(inner)
    return f"zone_route_target({k} {how} -> {rt.attrs[k]!r})"


def pert_backbone(p, rng):
    zones = [(z, k) for z, k in p.leaf_zones if k in GRAPH_ROUTINGS + ["Cluster"]]
    if not zones:
        return None
    z, k = rng.choice(zones)
    bb = E("backbone", {"id": p.uid("bb"), "bandwidth": rng.choice(["1GBps", "0Bps", "-1GBps"]),
                        "latency": rng.choice(["1us", "0"])})
    _leaf_insert(z, bb, "host")
    if rng.random() < 0.5:
        _leaf_insert(z, E("backbone", {"id": p.uid("bb"), "bandwidth": "1GBps", "latency": "1us"}), "host")
        return f"backbone(two in a {k} zone)"
    return f"backbone(in a {k} zone, bandwidth {bb.attrs['bandwidth']})"


def pert_cluster_attrs(p, rng):
    if not p.clusters:
        return None
    cl = rng.choice(p.clusters)[0]
    how = rng.choice(["bb_bw_only", "bb_lat_only", "loopback_bw_only", "loopback_lat_only", "limiter0", "fullduplex",
                      "router_is_host", "no_prefix", "core0", "bb_fatpipe", "policy_bad", "topo_flat_params",
                      "router_is_zone", "wifi"])
    a = cl.attrs
    # One of a pair (backbone, loopback) without the other: (dropped, set, value).
    halves = {"bb_bw_only": ("bb_lat", "bb_bw", "1GBps"), "bb_lat_only": ("bb_bw", "bb_lat", "1us"),
              "loopback_bw_only": ("loopback_lat", "loopback_bw", "1GBps"),
              "loopback_lat_only": ("loopback_bw", "loopback_lat", "1us")}
    if how in halves:
        dropped, kept, value = halves[how]
        a.pop(dropped, None)
        a[kept] = value
    elif how == "limiter0":
        a["limiter_link"] = rng.choice(["0", "0Bps", "1Bps"])
    elif how == "fullduplex":
        a["sharing_policy"] = "FULLDUPLEX"
    elif how == "router_is_host":
        a["router_id"] = rng.choice(p.hosts)
    elif how == "router_is_zone":
        a["router_id"] = rng.choice(p.zone_ids)
    elif how == "no_prefix":
        a["prefix"], a["suffix"] = "", ""
    elif how == "core0":
        a["core"] = rng.choice(["0", "-1", "1048577", "2.5"])
    elif how == "bb_fatpipe":
        a["bb_bw"] = a.get("bb_bw", "1GBps")
        a["bb_lat"] = a.get("bb_lat", "1us")
        a["bb_sharing_policy"] = rng.choice(["FATPIPE", "SPLITDUPLEX", "bogus"])
    elif how == "policy_bad":
        a["sharing_policy"] = rng.choice(["WIFI", "shared", "", "NONE"])
    elif how == "wifi":
        a["sharing_policy"] = "WIFI"
    else:
        a["topo_parameters"] = rng.choice(["2,2", "1;2;1;1", "junk"])
        a.pop("topology", None)
    return f"cluster_attrs({how})"


def pert_link_policy(p, rng):
    if not p.links:
        return None
    lid = rng.choice(sorted(p.links))
    el, parent, old = p.links[lid]
    new = rng.choice(["WIFI", "FULLDUPLEX", "shared", "SPLITDUPLEX", "FATPIPE", "SHARED", "", "NONE"])
    el.attrs["sharing_policy"] = new
    return f"link_policy({old}->{new!r}, link kept referenced as before)"


def pert_one_way(p, rng):
    """A route of a graph zone made one-way: the way back through it is gone."""
    routes = [(rt, z) for rt, z in _route_elems(p, ("route",)) if rt.attrs.get("symmetrical", "YES").upper() == "YES"
              and any(z is zz and k in GRAPH_ROUTINGS for zz, k in p.leaf_zones)]
    if not routes:
        return None
    rt, z = rng.choice(routes)
    rt.attrs["symmetrical"] = "NO"
    if rng.random() < 0.3:
        rt.attrs["src"], rt.attrs["dst"] = rt.attrs["dst"], rt.attrs["src"]
    kind = [k for zz, k in p.leaf_zones if zz is z][0]
    return f"one_way(route {rt.attrs['src']}->{rt.attrs['dst']} in a {kind} zone)"


PERTURBATIONS = [
    (pert_bad_number, 8), (pert_wrong_unit, 3), (pert_unitless, 1), (pert_duplicate_id, 6),
    (pert_missing_reference, 6), (pert_wrong_direction, 4), (pert_empty_route, 4), (pert_missing_attribute, 5),
    (pert_whitespace, 4), (pert_padded_value, 2), (pert_gateway_wrong_zone, 4), (pert_second_root, 2),
    (pert_foreign_route, 3), (pert_routing, 3), (pert_topology, 6), (pert_radical, 3), (pert_trace, 6),
    (pert_pstate, 3), (pert_coordinates, 3), (pert_host_link, 3), (pert_duplicate_route, 3), (pert_self_route, 2),
    (pert_bypass, 4), (pert_config, 3), (pert_order, 2), (pert_syntax, 5), (pert_zone_route_target, 3),
    (pert_backbone, 2), (pert_cluster_attrs, 4), (pert_link_policy, 3), (pert_one_way, 3),
]


def make_case(case_seed):
    """Returns (platform text, files, perturbation labels, first host name)."""
    rng = random.Random(case_seed)
    p = Platform(rng)
    p.generate()
    first_host = p.hosts[0] if p.hosts else None
    n = rng.choices([0, 1, 2], [30, 48, 22])[0]
    funcs, weights = zip(*PERTURBATIONS)
    for _ in range(n):
        for _attempt in range(10):
            f = rng.choices(funcs, weights)[0]
            try:
                label = f(p, rng)
            except KeyError:  # an attribute an earlier perturbation took away: try another
                label = None
            if label:
                p.labels.append(label)
                break
    return p.text(), dict(p.files), p.labels, first_host, p.shape


# --------------------------------------------------------------------------------------------
# Running and classifying
# --------------------------------------------------------------------------------------------

SCENARIO = """<?xml version="1.0"?>
<scenario model="master_worker" seed="1">
  <platform file="p.xml"/>
  <param name="tasks" value="20"/>
  <param name="task_flops" value="1Gf"/>
  <param name="task_bytes" value="1MB"/>
  <param name="workers" value="{workers}"/>
{master}</scenario>
"""

FLAGGED = ["signal", "exit1", "timeout", "exit2-no-line", "exit2-no-expected", "noise", "other", "no-summary"]
CLASSES = ["ok", "refused"] + FLAGGED
REFUSED_AT_LINE = re.compile(r"^simcore: error: .+:\d+: .*expected")
REFUSED_ELSEWHERE = re.compile(r"^simcore: error: .*expected")
LOCATED = re.compile(r"^simcore: error: \S+:\d+: ")


def run_cmd(cmd, cwd, timeout):
    return run_command(cmd, cwd, timeout)


def classify(res, file_names):
    """file_names: the platform's files (p.xml and trace files), which an error should locate."""
    if res["timeout"]:
        return "timeout"
    failed, lines = failure_class(res)
    if failed:
        return failed
    rc = res["rc"]
    if rc == 0:
        return "noise" if lines and "--quiet" in res["cmd"] else "ok"
    line = lines[0]
    if not line.startswith("simcore: error: "):
        return "other"
    mentions_file = any(re.search(r"(^|[\s'\"(=/])" + re.escape(f) + r"($|[^\w.:]|:(?!\d))", line) for f in file_names)
    if LOCATED.match(line) and REFUSED_AT_LINE.match(line):
        return "refused"
    if mentions_file and not LOCATED.match(line):
        return "exit2-no-line"
    if "expected" not in line:
        return "exit2-no-expected"
    if REFUSED_ELSEWHERE.match(line):
        return "refused"
    return "other"


def parse_hosts(stdout):
    """Host count and names from 'simcore platform' text output."""
    m = re.search(r":\s*(\d+) hosts?\b", stdout)
    count = int(m.group(1)) if m else None
    names, in_hosts = [], False
    for line in stdout.splitlines():
        if line.startswith("hosts:"):
            in_hosts = True
            continue
        if in_hosts:
            if line.startswith("  ") and line.strip():
                names.append(line.split()[0])
            elif line.strip():
                in_hosts = False
    return count, names


def run_case(case, args):
    tmp = tempfile.mkdtemp(prefix=f"pfuzz-s{args.seed}-c{case['n']}-")
    try:
        files = {"p.xml": case["platform"]}
        files.update(case["files"])
        for name, body in files.items():
            path = os.path.join(tmp, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(body)
        names = sorted({os.path.basename(n) for n in files})
        result = {"n": case["n"], "labels": case["labels"], "shape": case["shape"], "stages": []}
        res = run_cmd([args.bin, "platform", "p.xml"], tmp, args.timeout)
        res["stage"] = "platform"
        res["class"] = classify(res, names)
        result["stages"].append(res)
        if res["class"] == "ok" and res["rc"] == 0:
            count, listed = parse_hosts(res["stdout"])
            if count is None:
                count = len(listed)
            if case["first_host"] not in listed:
                # names with blanks: the text listing splits them; the JSON one does not
                js = run_cmd([args.bin, "platform", "p.xml", "--json"], tmp, args.timeout)
                try:
                    listed = [h["name"] for h in json.loads(js["stdout"])["hosts"]]
                    count = len(listed)
                except (ValueError, KeyError, TypeError):
                    pass
            if count < 2:
                result["skip_run"] = f"{count} host(s)"
            else:
                master = case["first_host"]
                if listed and master not in listed:
                    result["master_note"] = f"first generated host {master!r} not listed; took {listed[0]!r}"
                    master = listed[0]
                workers = min(4, count - 1)
                value = _esc_attr(master).replace("\t", "&#9;").replace("\n", "&#10;").replace("\r", "&#13;")
                mline = f'  <param name="master" value="{value}"/>\n' if master else ""
                with open(os.path.join(tmp, "scenario.xml"), "w", encoding="utf-8") as f:
                    f.write(SCENARIO.format(workers=workers, master=mline))
                res2 = run_cmd([args.bin, "run", "scenario.xml", "--out", "out", "--quiet"], tmp, args.timeout)
                res2["stage"] = "run"
                res2["class"] = classify(res2, names + ["scenario.xml"])
                if res2["class"] == "ok" and not os.path.isfile(os.path.join(tmp, "out", "summary.json")):
                    res2["class"] = "no-summary"
                result["stages"].append(res2)
        flagged = [s for s in result["stages"] if s["class"] in FLAGGED]
        if flagged and args.keep:
            dest = os.path.join(args.keep, f"seed{args.seed}-case{case['n']:04d}-{flagged[0]['stage']}-{flagged[0]['class']}")
            shutil.rmtree(dest, ignore_errors=True)
            shutil.rmtree(os.path.join(tmp, "out"), ignore_errors=True)
            shutil.copytree(tmp, dest)
            with open(os.path.join(dest, "report.txt"), "w", encoding="utf-8") as f:
                f.write(f"case {case['n']} of seed {args.seed} ({case['shape']}); perturbations: "
                        f"{'; '.join(case['labels']) or 'none'}\n")
                for s in result["stages"]:
                    f.write(f"\n[{s['stage']}] class {s['class']}\ncwd: {dest}\ncommand: "
                            f"{' '.join(s['cmd'])}\nexit code: {s['rc']}{' (timeout)' if s['timeout'] else ''}\n"
                            f"seconds: {s['seconds']:.2f}\nstderr:\n{s['stderr']}\n")
            result["kept"] = dest
        return result
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def normalise(stderr):
    lines = [l for l in stderr.splitlines() if l.strip()][:2]
    text = " | ".join(lines)
    text = re.sub(r"(Existing netpoints:|unknown unit:|cannot parse number:|value out of range:).*", r"\1 <V>", text)
    text = re.sub(r"\(XML input line \d+, state \d+\)", "", text)
    text = mask(text)
    text = re.sub(r"[\w.+-]*\d[\w.+-]*", "<N>", text)
    return text[:240]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_arguments(ap, 200, 20, "folder for every flagged case (platform, scenario, report.txt)")
    ap.add_argument("--dump", help="write the generated cases there and run nothing (to inspect the generator)")
    args = ap.parse_args()
    if not args.dump and (not args.bin or not os.access(args.bin, os.X_OK)):
        ap.error("--bin (or SIMCORE_BIN) must name the simcore executable")
    if args.bin:
        args.bin = os.path.abspath(args.bin)
    if args.keep:
        args.keep = os.path.abspath(args.keep)
        os.makedirs(args.keep, exist_ok=True)

    master = random.Random(args.seed)
    cases = []
    for n in range(1, args.cases + 1):
        case_seed = master.getrandbits(64)
        text, files, labels, first_host, shape = make_case(case_seed)
        cases.append({"n": n, "platform": text, "files": files, "labels": labels, "first_host": first_host,
                      "shape": shape})
    if args.dump:
        for c in cases:
            d = os.path.join(args.dump, f"case{c['n']:04d}")
            os.makedirs(d, exist_ok=True)
            for name, body in [("p.xml", c["platform"])] + sorted(c["files"].items()):
                os.makedirs(os.path.dirname(os.path.join(d, name)), exist_ok=True)
                with open(os.path.join(d, name), "w", encoding="utf-8", newline="") as f:
                    f.write(body)
            with open(os.path.join(d, "labels.txt"), "w") as f:
                f.write("\n".join(c["labels"]) + "\n")
        return 0

    t0 = time.monotonic()
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(run_case, c, args) for c in cases]
        for fut in concurrent.futures.as_completed(futures):
            r = fut.result()
            results.append(r)
            if not args.quiet:
                for s in r["stages"]:
                    if s["class"] in FLAGGED:
                        first = (s["stderr"].strip().splitlines() or [""])[0][:160]
                        print(f"case {r['n']}: {s['stage']} {s['class']} (rc {s['rc']}): {first}", flush=True)
    results.sort(key=lambda r: r["n"])
    elapsed = time.monotonic() - t0

    counts = {st: collections.Counter() for st in ("platform", "run")}
    skipped = collections.Counter()
    groups = collections.OrderedDict()
    for r in results:
        for s in r["stages"]:
            counts[s["stage"]][s["class"]] += 1
            if s["class"] in FLAGGED:
                key = (s["class"], s["stage"], normalise(s["stderr"]) or f"(empty stderr, rc {s['rc']})")
                groups.setdefault(key, []).append((r, s))
        if "skip_run" in r:
            skipped["run"] += 1

    print(f"\nsimcore platform fuzz: seed {args.seed}, {args.cases} cases, {args.jobs} jobs, {elapsed:.0f} s, "
          f"binary {args.bin}")
    shown = [c for c in CLASSES if any(counts[st][c] for st in counts)] or ["ok"]
    print("stage     " + "".join(c.rjust(max(6, len(c) + 2)) for c in shown) + "   total  skipped")
    for st in ("platform", "run"):
        total = sum(counts[st].values())
        print(st.ljust(10) + "".join(str(counts[st][c]).rjust(max(6, len(c) + 2)) for c in shown) + f"{total:8d}"
              + (f"{skipped['run']:9d}" if st == "run" else "        -"))
    plat_ok = counts["platform"]["ok"]
    warned = sum(1 for r in results for s in r["stages"] if s["stage"] == "platform" and s["rc"] == 0 and s["stderr"].strip())
    if warned:
        print(f"(platform exits 0 with SimGrid notes on stderr: {warned}; allowed)")
    print(f"platforms accepted: {plat_ok}/{args.cases} ({100.0 * plat_ok / max(1, args.cases):.0f} %)")
    nflag = sum(len(v) for v in groups.values())
    if not groups:
        print("nothing flagged")
        return 0
    print(f"\nflagged: {nflag} runs in {len({r['n'] for v in groups.values() for r, _ in v})} cases, "
          f"{len(groups)} distinct problems")
    for cls in FLAGGED:
        keys = [k for k in groups if k[0] == cls]
        if not keys:
            continue
        keys.sort(key=lambda k: -len(groups[k]))
        print(f"\n== {cls}: {sum(len(groups[k]) for k in keys)} runs, {len(keys)} distinct")
        for k in keys:
            items = groups[k]
            print(f"  [{len(items)}x, {k[1]}] {k[2]}")
            for r, s in items[:5]:
                err = s["stderr"].strip().replace("\n", " \\n ")[:200]
                print(f"    case {r['n']} ({r['shape']}; {'; '.join(r['labels']) or 'no perturbation'}) rc {s['rc']}"
                      f"{' timeout' if s['timeout'] else ''}")
                print(f"      stderr: {err}")
                if r.get("kept"):
                    print(f"      kept: {r['kept']}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
