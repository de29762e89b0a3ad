#include "simcore/platform.hpp"
#include "simcore/error.hpp"

#include <pugixml.hpp>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>

namespace simcore {

namespace {

/** SimGrid's own parser reports a missing DOCTYPE or a wrong root element as an obscure
 *  "Unexpected character in prolog"; say what is expected instead. */
void precheck_platform(const std::string& path)
{
  pugi::xml_document doc;
  auto res = doc.load_file(path.c_str(), pugi::parse_default | pugi::parse_doctype);
  if (!res)
    return; // SimGrid reports XML syntax errors with their line
  bool doctype = false;
  for (const auto& n : doc.children())
    if (n.type() == pugi::node_doctype)
      doctype = true;
  const std::string root = doc.document_element().name();
  if (root != "platform")
    throw InputError(path, "root element is <" + root + ">; expected a SimGrid platform (<platform version=\"4.1\">)");
  if (!doctype)
    throw InputError(path, "no <!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\"> line; SimGrid's "
                           "parser needs it after the <?xml?> line");
}

} // namespace

void load_platform(simgrid::s4u::Engine& engine, const std::string& path)
{
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw InputError(path, "platform file does not exist; expected a SimGrid XML platform (DTD 4.1)");
  precheck_platform(path);
  try {
    engine.load_platform(path);
  } catch (const simgrid::ParseError& e) {
    // SimGrid reports "Parse error at FILE:LINE: what".
    std::string msg = e.what();
    const std::string prefix = "Parse error at ";
    if (msg.rfind(prefix, 0) == 0) {
      msg = msg.substr(prefix.size());
      auto sep = msg.find(": ");
      if (sep != std::string::npos)
      {
        std::string what = msg.substr(sep + 2);
        throw InputError(msg.substr(0, sep), "invalid platform: " + what.substr(0, what.find('\n')));
      }
    }
    throw InputError(path, "invalid platform: " + msg);
  } catch (const std::invalid_argument& e) {
    throw InputError(path, std::string("invalid platform: ") + e.what());
  } catch (const simgrid::Exception& e) {
    throw InputError(path, std::string("invalid platform: ") + e.what());
  }
}

std::map<std::string, std::string> hosts_with_speed_profile(const std::string& path)
{
  std::map<std::string, std::string> out;
  pugi::xml_document doc;
  if (!doc.load_file(path.c_str()))
    return out;
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto at = [&](const pugi::xml_node& n, const char* what) {
    const auto offset = static_cast<std::size_t>(std::max<std::ptrdiff_t>(n.offset_debug(), 0));
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<long>(std::min(offset, text.size())), '\n');
    return path + ":" + std::to_string(line) + " (" + what + ")";
  };
  std::function<void(const pugi::xml_node&)> visit = [&](const pugi::xml_node& n) {
    for (const auto& c : n.children()) {
      const std::string tag = c.name();
      if (tag == "host" || tag == "peer") {
        for (const char* attr : {"speed_file", "availability_file"})
          if (*c.attribute(attr).value() != '\0') // speed_file="" is none, as SimGrid reads it
            out.emplace(c.attribute("id").value(), at(c, attr));
      } else if (tag == "trace_connect" && std::string(c.attribute("kind").value()) == "SPEED") {
        out.emplace(c.attribute("element").value(), at(c, "trace_connect kind=\"SPEED\""));
      }
      visit(c);
    }
  };
  visit(doc);
  return out;
}

namespace {

const char* sharing_name(simgrid::s4u::Link::SharingPolicy p)
{
  using P = simgrid::s4u::Link::SharingPolicy;
  switch (p) {
    case P::SHARED: return "shared";
    case P::SPLITDUPLEX: return "splitduplex";
    case P::FATPIPE: return "fatpipe";
    case P::NONLINEAR: return "nonlinear";
    case P::WIFI: return "wifi";
    default: return "other";
  }
}

nlohmann::ordered_json describe_zone(const simgrid::s4u::NetZone* z)
{
  nlohmann::ordered_json j;
  j["name"] = z->get_name();
  std::function<std::size_t(const simgrid::s4u::NetZone*)> count_hosts = [&](const simgrid::s4u::NetZone* zone) {
    std::size_t n = zone->get_all_hosts().size();
    for (const auto* c : zone->get_children())
      n += count_hosts(c);
    return n;
  };
  j["hosts"] = count_hosts(z); // including sub-zones
  auto children = z->get_children();
  std::sort(children.begin(), children.end(), [](auto a, auto b) { return a->get_name() < b->get_name(); });
  j["zones"] = nlohmann::ordered_json::array();
  for (const auto* c : children)
    j["zones"].push_back(describe_zone(c));
  return j;
}

} // namespace

nlohmann::ordered_json describe_platform(const simgrid::s4u::Engine& engine)
{
  nlohmann::ordered_json j;
  auto hosts = engine.get_all_hosts();
  std::sort(hosts.begin(), hosts.end(), [](auto a, auto b) { return a->get_name() < b->get_name(); });
  auto links = engine.get_all_links();
  std::sort(links.begin(), links.end(), [](auto a, auto b) { return a->get_name() < b->get_name(); });

  long cores = 0;
  double speed = 0;
  j["hosts"] = nlohmann::ordered_json::array();
  for (const auto* h : hosts) {
    nlohmann::ordered_json hj;
    hj["name"] = h->get_name();
    hj["speed"] = h->get_speed();
    hj["cores"] = h->get_core_count();
    hj["zone"] = h->get_englobing_zone()->get_name();
    j["hosts"].push_back(hj);
    cores += h->get_core_count();
    speed += h->get_speed() * h->get_core_count();
  }
  double bw = 0;
  j["links"] = nlohmann::ordered_json::array();
  for (const auto* l : links) {
    nlohmann::ordered_json lj;
    lj["name"] = l->get_name();
    lj["bandwidth"] = l->get_bandwidth();
    lj["latency"] = l->get_latency();
    lj["sharing"] = sharing_name(l->get_sharing_policy());
    j["links"].push_back(lj);
    bw += l->get_bandwidth();
  }
  j["zones"] = describe_zone(engine.get_netzone_root());
  nlohmann::ordered_json totals;
  totals["hosts"] = hosts.size();
  totals["cores"] = cores;
  totals["speed"] = speed;
  totals["links"] = links.size();
  totals["link_bandwidth"] = bw;
  std::size_t zones = 0;
  std::function<void(const simgrid::s4u::NetZone*)> count = [&](const simgrid::s4u::NetZone* z) {
    zones++;
    for (const auto* c : z->get_children())
      count(c);
  };
  count(engine.get_netzone_root());
  totals["zones"] = zones;
  j["totals"] = totals;
  return j;
}

void check_simgrid_config_item(const std::string& name, const std::string& value, const std::string& where)
{
  if (name == "network/loopback-bw" || name == "network/loopback-lat") {
    const bool bandwidth = name == "network/loopback-bw";
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    const bool number = !value.empty() && end == value.c_str() + value.size() &&
                        value.find_first_of("xX") == std::string::npos &&
                        !std::isspace(static_cast<unsigned char>(value.front()));
    if (!number || !(bandwidth ? v >= 1 && v <= 1e18 : v >= 0 && v <= 1e6))
      throw InputError(where, "SimGrid configuration '" + name + "' = '" + value + "'; expected " +
                                  (bandwidth ? "a bandwidth from 1 to 1e18 B/s, in B/s" : "a latency from 0 to 1e6 s, in s"));
    return;
  }
  // SimGrid 3.32's choices (--help-models); cpu/optim it checks itself when set.
  static const std::map<std::string, std::vector<std::string>> choices{
      {"host/model", {"default", "compound", "ptask_L07"}},
      {"cpu/model", {"Cas01"}},
      {"network/model", {"LV08", "Constant", "SMPI", "IB", "CM02", "ns-3"}},
      {"network/optim", {"Lazy", "TI", "Full"}},
      {"disk/model", {"default"}}};
  const auto it = choices.find(name);
  if (it == choices.end() || std::find(it->second.begin(), it->second.end(), value) != it->second.end())
    return;
  std::string list;
  for (const auto& c : it->second)
    list += (list.empty() ? "" : ", ") + c;
  throw InputError(where, "SimGrid configuration '" + name + "' = '" + value + "'; expected one of " + list);
}

} // namespace simcore
