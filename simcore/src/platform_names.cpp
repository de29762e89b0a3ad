#include "platform_names.hpp"
#include "simcore/error.hpp"

#include <unordered_map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace simcore {

namespace {

using Where = std::function<std::string(const pugi::xml_node&)>;

/** "<cluster id="c1">", "<host id="a">": an element as a message names it. */
std::string element_text(const pugi::xml_node& n)
{
  return "<" + std::string(n.name()) + " id=\"" + n.attribute("id").value() + "\">";
}

/** "line 12": where a second element of the same file is, in a message that names the file. */
std::string line_of(const Where& where, const pugi::xml_node& n)
{
  const std::string at = where(n);
  return "line " + at.substr(at.rfind(':') + 1);
}

/** The numbers of a radical ("0-3,7": 0 1 2 3 7), as SimGrid 3.32 makes host names of them. */
std::vector<long long> radical_numbers(const std::string& radical)
{
  std::vector<long long> out;
  std::stringstream items(radical);
  for (std::string item; std::getline(items, item, ',');) {
    const auto dash = item.find('-');
    const long long lo = std::stoll(item.substr(0, dash));
    const long long hi = dash == std::string::npos ? lo : std::stoll(item.substr(dash + 1));
    for (long long i = lo; i <= hi; i++)
      out.push_back(i);
  }
  return out;
}

bool is_split(const pugi::xml_node& link)
{
  return std::string(link.attribute("sharing_policy").value()) == "SPLITDUPLEX";
}

/** Names of one kind and the element that declared each. */
class Names {
public:
  Names(const char* kind, const char* expected, const Where& where) : kind_(kind), expected_(expected), where_(where) {}
  void add(const std::string& name, const pugi::xml_node& by)
  {
    const auto [it, fresh] = first_.emplace(name, by);
    if (fresh)
      return;
    const pugi::xml_node first = it->second;
    const std::string tag = by.name();
    const bool made = tag == "cluster" || tag == "cabinet" || name != by.attribute("id").value();
    const std::string what = made ? element_text(by) + " makes " + kind_ + " '" + name + "'"
                                  : element_text(by) + " takes the name '" + name + "'";
    if (first == by)
      throw InputError(where_(by), what + " twice; expected " + expected_);
    throw InputError(where_(by), what + ", which " + element_text(first) + " at " + line_of(where_, first) +
                                     " took already; expected " + expected_);
  }
  bool has(const std::string& name) const { return first_.count(name) > 0; }
  pugi::xml_node element(const std::string& name) const
  {
    const auto it = first_.find(name);
    return it == first_.end() ? pugi::xml_node() : it->second;
  }

private:
  const char* kind_;
  const char* expected_;
  const Where& where_;
  std::unordered_map<std::string, pugi::xml_node> first_;
};

/** What a <link_ctn> names. SimGrid 3.32 looks a name without direction up among links and
 *  split-duplex halves ("l_UP"), and a name with one among split-duplex links ("l"). */
void check_link_reference(const pugi::xml_node& ctn, const Names& links, const Names& split_links,
                          const std::vector<std::string>& made_prefixes, const Where& where)
{
  const std::string id = ctn.attribute("id").value();
  const std::string direction = ctn.attribute("direction").value();
  const bool half = direction == "UP" || direction == "DOWN";
  if ((half ? split_links : links).has(id))
    return;
  for (const auto& prefix : made_prefixes) // a link a cluster or cabinet makes
    if (id.rfind(prefix, 0) == 0)
      return;
  const std::string at = "<link_ctn id=\"" + id + "\"" + (direction.empty() ? "" : " direction=\"" + direction + "\"") + ">";
  if (half && links.has(id))
    throw InputError(where(ctn), at + ": link '" + id + "' (" + line_of(where, links.element(id)) +
                                     ") is not SPLITDUPLEX, so it has no " + direction +
                                     " half; expected no direction, or sharing_policy=\"SPLITDUPLEX\" on the link");
  if (!half && split_links.has(id))
    throw InputError(where(ctn), at + ": link '" + id + "' (" + line_of(where, split_links.element(id)) +
                                     ") is SPLITDUPLEX; expected direction=\"UP\" or \"DOWN\" (or its half '" + id +
                                     "_UP' or '" + id + "_DOWN')");
  throw InputError(where(ctn), at + ": no " + (half ? "SPLITDUPLEX link" : "link") + " '" + id +
                                   "' in the platform; expected the id of a <link>" +
                                   (half ? " with sharing_policy=\"SPLITDUPLEX\"" : ""));
}

/** The zone (or cluster) named `id` among the children of `parent`. */
pugi::xml_node child_zone(const pugi::xml_node& parent, const std::string& id)
{
  for (const auto& c : parent.children())
    if ((std::string(c.name()) == "zone" || std::string(c.name()) == "cluster") && id == c.attribute("id").value())
      return c;
  return {};
}

/** The zone whose member a host or router element (or a host a cluster or cabinet makes) is. */
pugi::xml_node zone_of(const pugi::xml_node& node)
{
  return std::string(node.name()) == "cluster" ? node : node.parent();
}

/** A route joins two hosts or routers of its zone, a zone route two zones inside its zone:
 *  SimGrid 3.32 refused others without a line ("a@y1 and y2@z are not in the same netzone as
 *  expected. Please report that bug"). */
void check_route_end(const pugi::xml_node& route, const char* end, const Names& nodes, const Names& zones,
                     const Where& where)
{
  const std::string name = route.attribute(end).value();
  const pugi::xml_node zone = route.parent();
  const std::string tag = route.name();
  const std::string at = "<" + tag + " " + end + "=\"" + name + "\">";
  const pugi::xml_node node = nodes.element(name);
  const pugi::xml_node named_zone = zones.element(name);
  const bool made = node && (std::string(node.name()) == "cluster" || std::string(node.name()) == "cabinet");
  const std::string node_text = made ? "host '" + name + "' of " + element_text(node) : element_text(node);
  if (tag == "route") {
    if (node && zone_of(node) != zone)
      throw InputError(where(route), at + ": " + node_text + " (" + line_of(where, node) +
                                         ") is not a host or router of zone '" + zone.attribute("id").value() +
                                         "', which declares the route; expected a host or router of that zone (a "
                                         "<zoneRoute> joins zones)");
    return;
  }
  if (node && !named_zone)
    throw InputError(where(route), at + ": '" + name + "' is " + (made ? "a host of " + element_text(node) : element_text(node)) +
                                       " (" + line_of(where, node) + "), not a zone; expected a zone or cluster inside "
                                       "zone '" + zone.attribute("id").value() + "'");
  if (node && named_zone)
    throw InputError(where(route), at + ": '" + name + "' names " + node_text + " (" + line_of(where, node) + ") and " +
                                       element_text(named_zone) + " (" + line_of(where, named_zone) +
                                       "), and SimGrid 3.32 takes the host; expected a zone id that no host or router "
                                       "shares");
  if (named_zone && named_zone.parent() != zone)
    throw InputError(where(route), at + ": " + element_text(named_zone) + " (" + line_of(where, named_zone) +
                                       ") is not inside zone '" + zone.attribute("id").value() +
                                       "', which declares the route; expected a zone or cluster inside it");
}

bool is_inside(pugi::xml_node n, const pugi::xml_node& zone)
{
  for (; n; n = n.parent())
    if (n == zone)
      return true;
  return false;
}

} // namespace

void check_platform_names(const pugi::xml_document& doc, const Where& where)
{
  Names nodes("host", "unique names of hosts and routers (another prefix, suffix or radical for a cluster)", where);
  Names zones("zone", "unique ids of zones and clusters", where);
  Names links("link", "unique link ids (a SPLITDUPLEX link 'l' is also 'l_UP' and 'l_DOWN'; a cluster 'c' with a "
                      "backbone makes 'c_backbone')",
              where);
  Names split_links("SPLITDUPLEX link", "unique ids of SPLITDUPLEX links", where);
  std::vector<std::string> made_prefixes; // links named after a cluster or cabinet
  auto declared = doc.select_nodes("//host | //peer | //router | //cluster | //cabinet | //zone | //link | //backbone");
  declared.sort(); // in the order SimGrid reads them
  for (const auto& hit : declared) {
    const pugi::xml_node n = hit.node();
    const std::string tag = n.name();
    const std::string id = n.attribute("id").value();
    if (tag == "host" || tag == "peer" || tag == "router")
      nodes.add(id, n);
    else if (tag == "zone")
      zones.add(id, n);
    else if (tag == "link" && is_split(n)) {
      split_links.add(id, n);
      links.add(id + "_UP", n);
      links.add(id + "_DOWN", n);
    } else if (tag == "link" || tag == "backbone")
      links.add(id, n);
    if (tag == "cluster" || tag == "cabinet") {
      const std::string prefix = n.attribute("prefix").value();
      const std::string suffix = n.attribute("suffix").value();
      for (const long long i : radical_numbers(n.attribute("radical").value()))
        nodes.add(prefix + std::to_string(i) + suffix, n);
      made_prefixes.push_back(tag == "cluster" ? id + "_" : "link_");
    }
    if (tag == "cluster") {
      zones.add(id, n);
      if (*n.attribute("router_id").value() != '\0')
        nodes.add(n.attribute("router_id").value(), n);
      if (*n.attribute("bb_bw").value() != '\0')
        links.add(id + "_backbone", n);
    }
  }
  // Zones are points of the network too: SimGrid 3.32 refused a router of a zone's name without a
  // line ("this name already describes a node"; a host of that name it takes).
  for (const auto& hit : doc.select_nodes("//router | //cluster[@router_id]")) {
    const pugi::xml_node n = hit.node();
    const bool router = std::string(n.name()) == "router";
    const std::string name = n.attribute(router ? "id" : "router_id").value();
    if (const pugi::xml_node zone = zones.element(name))
      throw InputError(where(n), (router ? element_text(n) : element_text(n) + " router_id='" + name + "'") +
                                     ": the name of " + element_text(zone) + " (" + line_of(where, zone) +
                                     "); expected a router name no zone has");
  }
  // "Host not found: 'x'", no line.
  for (const auto& hit : doc.select_nodes("//host_link")) {
    const std::string id = hit.node().attribute("id").value();
    const pugi::xml_node host = nodes.element(id);
    if (!host || std::string(host.name()) == "router")
      throw InputError(where(hit.node()), "<host_link id=\"" + id + "\">: no host '" + id +
                                              "' in the platform; expected the id of a <host>");
  }
  for (const auto& hit : doc.select_nodes("//link_ctn"))
    check_link_reference(hit.node(), links, split_links, made_prefixes, where);
  for (const auto& hit : doc.select_nodes("//route | //zoneRoute | //bypassRoute | //bypassZoneRoute")) {
    const pugi::xml_node n = hit.node();
    if (!n.child("link_ctn"))
      throw InputError(where(n), "<" + std::string(n.name()) + " src=\"" + n.attribute("src").value() + "\" dst=\"" +
                                     n.attribute("dst").value() +
                                     "\"> holds no <link_ctn>; expected at least one link (SimGrid forbids empty "
                                     "routes)");
    const std::string tag = n.name();
    const std::string routing = n.parent().attribute("routing").value();
    const std::string src = n.attribute("src").value(), dst = n.attribute("dst").value();
    if ((tag == "route" || tag == "zoneRoute") && (routing == "Cluster" || routing == "Vivaldi") && src != dst)
      throw InputError(where(n), "<" + tag + " src=\"" + src + "\" dst=\"" + dst + "\"> in a <zone routing=\"" +
                                     routing + "\">, which routes through each member's own links; expected none "
                                     "(a <host_link> gives a member its links), or a loopback route from a host to "
                                     "itself");
    if (tag == "zoneRoute" && src == dst)
      throw InputError(where(n), "<zoneRoute src=\"" + src + "\" dst=\"" + dst +
                                     "\"> from a zone to itself; expected two zones (a <route> joins hosts of one)");
    if (tag == "route" || tag == "zoneRoute")
      for (const char* end : {"src", "dst"})
        check_route_end(n, end, nodes, zones, where);
    if (tag == "route" || tag == "bypassRoute")
      continue;
    for (const char* end : {"src", "dst"}) {
      const std::string gateway = n.attribute(end == std::string("src") ? "gw_src" : "gw_dst").value();
      const pugi::xml_node node = nodes.element(gateway);
      const pugi::xml_node zone = child_zone(n.parent(), n.attribute(end).value());
      if (!node && zones.has(gateway))
        throw InputError(where(n), "<" + std::string(n.name()) + " gw_" + end + "=\"" + gateway + "\">: " +
                                       element_text(zones.element(gateway)) + " (" +
                                       line_of(where, zones.element(gateway)) +
                                       ") is a zone; expected a host or router of zone '" + n.attribute(end).value() +
                                       "'");
      if (!node || !zone || is_inside(node, zone))
        continue;
      throw InputError(where(n), "<" + std::string(n.name()) + " gw_" + end + "=\"" + gateway + "\">: " +
                                     element_text(node) + " (" + line_of(where, node) + ") is not inside zone '" +
                                     n.attribute(end).value() + "' (" + line_of(where, zone) +
                                     "); expected a host or router of that zone");
    }
  }
}

} // namespace simcore
