#include "cluster_topology.hpp"
#include "simcore/error.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

namespace simcore {

namespace {

constexpr long long kMostPerItem = 1048576; // any one count of a topology: 2^20

/** The items of `text` between `sep` (an empty one where two separators meet or one ends
 *  the text, for the caller to refuse). */
std::vector<std::string> split(const std::string& text, char sep)
{
  std::vector<std::string> out;
  std::string::size_type start = 0;
  for (;;) {
    const auto at = text.find(sep, start);
    out.push_back(text.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos)
      return out;
    start = at + 1;
  }
}

/** A count from 1 to kMostPerItem written in digits only, blanks around it aside (SimGrid's
 *  std::stoi read "2x2" as 2 and aborted past an int); 0 when it is not one. */
long long count_of(std::string text)
{
  // Blanks around a count are SimGrid's too ("2, 2, 2"): std::stoi skips them.
  const auto first = text.find_first_not_of(" \t\r\n");
  text = first == std::string::npos ? "" : text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
  if (text.empty() || text.size() > 7 || !std::all_of(text.begin(), text.end(), [](unsigned char c) {
        return std::isdigit(c);
      }))
    return 0;
  const long long v = std::stoll(text);
  return v <= kMostPerItem ? v : 0;
}

/** `text` as `n` counts between `sep` (any n when n is 0); empty when it is not that. */
std::vector<long long> counts_of(const std::string& text, char sep, std::size_t n = 0)
{
  std::vector<long long> out;
  for (const auto& item : split(text, sep)) {
    const long long v = count_of(item);
    if (v == 0)
      return {};
    out.push_back(v);
  }
  if (n != 0 && out.size() != n)
    return {};
  return out;
}

double product(const std::vector<long long>& v, std::size_t from = 0, std::size_t to = std::string::npos)
{
  double p = 1;
  for (std::size_t i = from; i < std::min(to, v.size()); ++i)
    p *= static_cast<double>(v[i]);
  return p;
}

/** What a topology makes. */
struct Made {
  double hosts = 0;
  double links = 0;
};

Made torus(const std::string& params, const std::string& at, const std::string& what)
{
  const auto dims = counts_of(params, ',');
  // Two dimensions of 1 give two links of the same name ("declared several times"): an abort.
  if (dims.empty() || (dims.size() > 1 && std::count(dims.begin(), dims.end(), 1LL) > 1))
    throw InputError(at, what + "; expected the size of each dimension, such as 4,4,4: whole numbers from 1 to "
                                "1048576, at most one of them 1 (SimGrid 3.32 gives two such dimensions' links "
                                "one name and aborts)");
  const double hosts = product(dims);
  return {hosts, hosts * static_cast<double>(dims.size())};
}

Made fat_tree(const std::string& params, const std::string& at, const std::string& what, bool limiter)
{
  const char* expected = "; expected LEVELS;DOWN;UP;COUNT such as 2;8,8;1,4;1,1: a number of levels from 1 to 16, "
                         "then three lists of that many whole numbers from 1 to 1048576 (children of a switch, "
                         "parents of a node, parallel links to each parent, per level)";
  const auto parts = split(params, ';');
  const long long levels = parts.size() == 4 ? count_of(parts[0]) : 0;
  if (levels < 1 || levels > 16)
    throw InputError(at, what + expected);
  const auto n = static_cast<std::size_t>(levels);
  const auto down = counts_of(parts[1], ',', n);
  const auto up = counts_of(parts[2], ',', n);
  const auto parallel = counts_of(parts[3], ',', n);
  if (down.empty() || up.empty() || parallel.empty())
    throw InputError(at, what + expected);
  Made made{product(down), 0};
  double below = made.hosts; // nodes of the level under the one being counted
  double switches = 0;
  for (std::size_t level = 0; level < n; ++level) {
    made.links += below * static_cast<double>(up[level] * parallel[level]);
    below = product(down, level + 1) * product(up, 0, level + 1);
    switches += below;
  }
  // Its limiter links are numbered by node, switches included: with more switches than
  // hosts two of them take one name ("declared several times"), an abort.
  if (limiter && switches > made.hosts)
    throw InputError(at, what + " with limiter_link: the tree has " + std::to_string(std::llround(switches)) +
                             " switches for " + std::to_string(std::llround(made.hosts)) +
                             " hosts; expected no more switches than hosts (SimGrid 3.32 gives two limiter links "
                             "one name and aborts), or no limiter_link");
  return made;
}

Made dragonfly(const std::string& params, const std::string& at, const std::string& what)
{
  const char* expected = "; expected GROUPS,LINKS;CHASSIS,LINKS;BLADES,LINKS;NODES such as 4,2;3,3;4,2;2: whole "
                         "numbers from 1 to 1048576";
  const auto parts = split(params, ';');
  std::vector<long long> v;
  if (parts.size() == 4)
    for (std::size_t i = 0; i < 4; ++i) {
      const auto items = counts_of(parts[i], ',', i < 3 ? 2 : 1);
      if (items.empty()) {
        v.clear();
        break;
      }
      v.insert(v.end(), items.begin(), items.end());
    }
  if (v.size() != 7)
    throw InputError(at, what + expected);
  const double groups = static_cast<double>(v[0]);
  const double chassis = static_cast<double>(v[2]);
  const double blades = static_cast<double>(v[4]);
  const double nodes = static_cast<double>(v[6]);
  // A route to another group leaves through the blade of the target group's number.
  if (v[0] > 1 && v[0] > v[4])
    throw InputError(at, what + "; expected no more groups than blades per chassis (" + std::to_string(v[4]) +
                             "): SimGrid 3.32 routes to group g through blade g, and crashes routing to a group past "
                             "the blades");
  const double routers = groups * chassis * blades;
  return {routers * nodes, routers * nodes + routers * (blades - 1) / 2 + routers * (chassis - 1) / 2 +
                               groups * (groups - 1) / 2};
}

/** How many hosts a radical names ("0-15,32": 17); checked for its form already. */
double radical_count(const std::string& radical)
{
  double n = 0;
  for (const auto& item : split(radical, ',')) {
    const auto dash = item.find('-');
    const double lo = std::stod(item.substr(0, dash));
    const double hi = dash == std::string::npos ? lo : std::stod(item.substr(dash + 1));
    n += hi - lo + 1;
  }
  return n;
}

std::string count_text(double n)
{
  return std::to_string(std::llround(n));
}

} // namespace

void check_cluster_topologies(const pugi::xml_document& doc,
                              const std::function<std::string(const pugi::xml_node&)>& where)
{
  double hosts = static_cast<double>(doc.select_nodes("//host").size() + doc.select_nodes("//peer").size());
  for (const auto& hit : doc.select_nodes("//cluster | //cabinet")) {
    const pugi::xml_node n = hit.node();
    const double named = radical_count(n.attribute("radical").value());
    const std::string topology = n.attribute("topology").value();
    if (std::string(n.name()) == "cabinet" || topology.empty() || topology == "FLAT") {
      hosts += named;
      continue;
    }
    const std::string params = n.attribute("topo_parameters").value();
    const std::string at = where(n);
    const std::string what = "<cluster topology=\"" + topology + "\"> topo_parameters='" + params + "'";
    const double limiter = std::strtod(n.attribute("limiter_link").value(), nullptr);
    Made made;
    if (topology == "TORUS")
      made = torus(params, at, what);
    else if (topology == "FAT_TREE")
      made = fat_tree(params, at, what, limiter > 0);
    else if (topology == "DRAGONFLY")
      made = dragonfly(params, at, what);
    else
      continue; // SimGrid's parser names a topology it lacks, at its line
    if (made.hosts > kMostHosts || made.links > kMostTopologyLinks)
      throw InputError(at, what + " makes " + count_text(made.hosts) + " hosts and about " + count_text(made.links) +
                               " links; expected at most " + count_text(kMostHosts) + " hosts and " +
                               count_text(kMostTopologyLinks) + " links");
    // SimGrid 3.32 aborts with fewer radicals than hosts, and leaves the rest unused with more.
    if (named != made.hosts)
      throw InputError(at, "<cluster> radical='" + std::string(n.attribute("radical").value()) + "' names " +
                               count_text(named) + " hosts, but topology " + topology + " '" + params + "' makes " +
                               count_text(made.hosts) + "; expected radicals for exactly " + count_text(made.hosts) +
                               " hosts, such as 0-" + count_text(made.hosts - 1));
    hosts += made.hosts;
  }
  if (hosts > kMostHosts)
    throw InputError(where(doc.document_element()),
                     "the platform declares " + count_text(hosts) + " hosts; expected at most " +
                         count_text(kMostHosts) + " (2^20)");
}

} // namespace simcore
