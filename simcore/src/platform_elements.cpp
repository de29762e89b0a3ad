#include "platform_elements.hpp"
#include "simcore/error.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <string>

namespace simcore {

void check_platform_elements(const pugi::xml_document& doc,
                             const std::function<std::string(const pugi::xml_node&)>& where)
{
  // A platform has one root zone: a second one (two <cluster>s side by side) failed with
  // "Invalid CPU model: nullptr. Have you set the parent of this NetZone", without a line.
  pugi::xml_node root_zone;
  for (const auto& n : doc.document_element().children()) {
    const std::string name = n.name();
    if (name != "zone" && name != "cluster")
      continue;
    if (root_zone)
      throw InputError(where(n), "a second root zone <" + name + " id=\"" + n.attribute("id").value() +
                                     "\"> (the first is <" + root_zone.name() + " id=\"" +
                                     root_zone.attribute("id").value() + "\"> at " + where(root_zone) +
                                     "); expected one: put them in a <zone routing=\"Full\"> joined by <zoneRoute>s");
    root_zone = n;
  }
  // "Invalid parameters for CPU (pstate 2 >= length of pstates 2)": an abort.
  for (const auto& hit : doc.select_nodes("//host[@pstate]")) {
    const pugi::xml_node n = hit.node();
    const std::string pstate = n.attribute("pstate").value();
    const std::string speed = n.attribute("speed").value();
    const auto speeds = static_cast<long>(std::count(speed.begin(), speed.end(), ',') + 1);
    const bool whole = !pstate.empty() && pstate.size() < 10 &&
                       std::all_of(pstate.begin(), pstate.end(), [](unsigned char c) { return std::isdigit(c); });
    if (!whole || std::stol(pstate) >= speeds)
      throw InputError(where(n), "<host pstate=\"" + pstate + "\">; expected a whole number from 0 to " +
                                     std::to_string(speeds - 1) + ", the index of one of its " +
                                     std::to_string(speeds) + " speeds");
  }
  // "Non-WIFI links must use only 1 bandwidth": an abort.
  for (const auto& hit : doc.select_nodes("//link[contains(@bandwidth, ',')] | //backbone[contains(@bandwidth, ',')]"))
    throw InputError(where(hit.node()), std::string("<") + hit.node().name() + " bandwidth=\"" +
                                            hit.node().attribute("bandwidth").value() +
                                            "\">; expected one bandwidth (lists are for Wi-Fi links)");
  // A backbone latency without a bandwidth made a link of 0 B/s ("The Impossible Did Happen").
  for (const auto& hit : doc.select_nodes("//cluster[@bb_lat and not(@bb_bw)]"))
    throw InputError(where(hit.node()), "<cluster> bb_lat without bb_bw; expected both (a backbone) or neither");
  // The DTD's default latency of 0 was "cannot parse number" in SimGrid 3.32.
  for (const auto& hit : doc.select_nodes("//link[not(@latency)] | //backbone[not(@latency)]"))
    throw InputError(where(hit.node()), std::string("<") + hit.node().name() + " id=\"" +
                                            hit.node().attribute("id").value() +
                                            "\"> without latency; expected latency=\"0\" or another time (SimGrid 3.32 "
                                            "cannot read it left out)");
  for (const auto& hit : doc.select_nodes("//peer[not(parent::zone[@routing='Vivaldi'])]"))
    throw InputError(where(hit.node()), "<peer id=\"" + std::string(hit.node().attribute("id").value()) +
                                            "\"> outside a Vivaldi zone (SimGrid 3.32 aborts); expected it in a "
                                            "<zone routing=\"Vivaldi\">");
  // <host_link up= down=>: "Link 'l' not found!", an abort. A split-duplex link is its halves.
  std::set<std::string> links;
  for (const auto& hit : doc.select_nodes("//link")) {
    const std::string id = hit.node().attribute("id").value();
    if (std::string(hit.node().attribute("sharing_policy").value()) == "SPLITDUPLEX")
      links.insert({id + "_UP", id + "_DOWN"});
    else
      links.insert(id);
  }
  for (const auto& hit : doc.select_nodes("//host_link"))
    for (const char* side : {"up", "down"}) {
      const std::string name = hit.node().attribute(side).value();
      if (!links.count(name))
        throw InputError(where(hit.node()), "<host_link " + std::string(side) + "=\"" + name + "\">: no such link; " +
                                                (links.count(name + "_UP")
                                                     ? "expected one half of the SPLITDUPLEX link: " + name + "_UP or " +
                                                           name + "_DOWN"
                                                     : std::string("expected a <link> of the platform")));
    }
  // A <zoneRoute> from or to the zone that declares it crashed SimGrid 3.32 (Floyd, Dijkstra).
  for (const auto& hit : doc.select_nodes("//zoneRoute")) {
    const pugi::xml_node n = hit.node();
    const std::string zone = n.parent().attribute("id").value();
    for (const char* end : {"src", "dst"})
      if (zone == n.attribute(end).value())
        throw InputError(where(n), "<zoneRoute " + std::string(end) + "=\"" + zone +
                                       "\"> names the zone that declares it; expected two zones inside it");
  }
}

} // namespace simcore
