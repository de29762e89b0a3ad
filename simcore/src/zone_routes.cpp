#include "zone_routes.hpp"
#include "simcore/error.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <utility>

namespace simcore {

namespace {

/** Routes of one zone: a second declaration of a direction aborted SimGrid 3.32 in Full and
 *  Floyd zones ("The route between a and b already exists") and crashed it in Dijkstra ones. */
void check_routes_of(const pugi::xml_node& zone, const std::function<std::string(const pugi::xml_node&)>& where)
{
  const std::string routing = zone.attribute("routing").value();
  std::set<std::pair<std::string, std::string>> declared;
  for (const auto& route : zone.children()) {
    const std::string element = route.name();
    if (element != "route" && element != "zoneRoute")
      continue;
    const std::string src = route.attribute("src").value();
    const std::string dst = route.attribute("dst").value();
    const std::string symmetrical = route.attribute("symmetrical").value();
    const bool both_ways = symmetrical != "NO" && symmetrical != "no";
    const std::string what = "<" + element + " src=\"" + src + "\" dst=\"" + dst + "\">";
    if (both_ways && src == dst && routing != "Full")
      throw InputError(where(route), what + " in a <zone routing=\"" + routing +
                                         "\"> is symmetrical, so SimGrid 3.32 declares it twice (an abort in Floyd "
                                         "zones, a crash in Dijkstra ones); expected symmetrical=\"NO\" on a route "
                                         "from a point to itself");
    for (const auto& direction : {std::make_pair(src, dst), std::make_pair(dst, src)}) {
      if (!declared.insert(direction).second)
        throw InputError(where(route), what + ": the route from '" + direction.first + "' to '" + direction.second +
                                           "' is declared already in zone '" + zone.attribute("id").value() +
                                           "' (routes are symmetrical unless symmetrical=\"NO\"); expected one "
                                           "route a direction");
      if (!both_ways || src == dst)
        break;
    }
  }
}

/** Three finite numbers of at most 1e8 in size between single spaces, as SimGrid 3.32 splits
 *  them (it aborted on another count, two spaces or a tab included): Vivaldi coordinates in
 *  ms, whose distances give latencies (1e308 made a latency of inf; 1e-320 made std::stod throw). */
bool coordinates_ok(const std::string& text)
{
  int n = 0;
  std::string::size_type start = 0;
  for (;;) {
    const auto end = text.find(' ', start);
    const std::string item = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    char* stop = nullptr;
    errno = 0;
    const double v = std::strtod(item.c_str(), &stop);
    if (errno == ERANGE) // 1e-400: std::stod threw
      return false;
    if (item.empty() || std::isspace(static_cast<unsigned char>(item.front())) || *stop != '\0' ||
        !std::isfinite(v) || std::fabs(v) > 1e8 || (v != 0 && std::fabs(v) < 1e-300)) // 1e-320: std::stod threw
      return false;
    ++n;
    if (end == std::string::npos)
      return n == 3;
    start = end + 1;
  }
}

} // namespace

void check_zone_routes(const pugi::xml_document& doc, const std::function<std::string(const pugi::xml_node&)>& where)
{
  for (const auto& hit : doc.select_nodes("//zone"))
    check_routes_of(hit.node(), where);
  // Routes over a Wi-Fi link need each station's rate, which SimGrid 3.32 takes from code only:
  // without it the first message aborted ("does not seem attached to that WIFI link", or "no
  // connecting path", or an access point it could not find).
  if (const auto wifi = doc.select_node("//zone[@routing='Wifi'] | //link[@sharing_policy='WIFI']")) {
    const bool zone = std::string(wifi.node().name()) == "zone";
    throw InputError(where(wifi.node()), std::string(zone ? "<zone routing=\"Wifi\">" : "<link sharing_policy=\"WIFI\">") +
                                             "; expected wired zones and links (SimGrid 3.32 sets a Wi-Fi station's "
                                             "rate from code only, and without it aborts on the first message)");
  }
  for (const auto& hit : doc.select_nodes("//*[@coordinates]")) {
    const std::string text = hit.node().attribute("coordinates").value();
    if (!coordinates_ok(text))
      throw InputError(where(hit.node()), std::string("<") + hit.node().name() + "> coordinates='" + text +
                                              "'; expected three numbers of at most 1e8 in size, such as '25.5 9.4 "
                                              "1.4' (Vivaldi coordinates, in ms)");
  }
  for (const auto& hit : doc.select_nodes("//zone[@routing='Vivaldi']/host[not(@coordinates)] | "
                                          "//zone[@routing='Vivaldi']/peer[not(@coordinates)]"))
    throw InputError(where(hit.node()), std::string("<") + hit.node().name() + " id=\"" +
                                            hit.node().attribute("id").value() +
                                            "\"> of a Vivaldi zone without coordinates; expected coordinates='X Y "
                                            "HEIGHT' (SimGrid 3.32 aborts routing it)");
}

} // namespace simcore
