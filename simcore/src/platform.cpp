#include "simcore/platform.hpp"
#include "cluster_topology.hpp"
#include "platform_elements.hpp"
#include "platform_names.hpp"
#include "platform_traces.hpp"
#include "zone_routes.hpp"
#include "simcore/error.hpp"
#include "simcore/units.hpp"

#include <pugixml.hpp>
#include <xbt/config.hpp>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <algorithm>
#include <cmath>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <sstream>

namespace simcore {

namespace {

/** Values SimGrid 3.32's parser takes and then aborts on ("must have at least one core",
 *  "The Impossible Did Happen" for a speed or bandwidth of 0, std::stoi on a radical past an
 *  int), and elements it dies on (<include>), each refused at its line: speeds and
 *  bandwidths positive (every value of a comma list: power states, Wi-Fi rates), latencies
 *  not negative, core counts whole from 1 to 2^20, radicals of numbers and ranges of ints. */
void check_platform_values(const pugi::xml_document& doc, const std::function<std::string(const pugi::xml_node&)>& where)
{
  enum class Kind { Speed, Bandwidth, Latency, Cores, Radical };
  struct Attribute {
    const char* element;
    const char* name;
    Kind kind;
  };
  static const Attribute attributes[] = {
      {"host", "speed", Kind::Speed},           {"host", "core", Kind::Cores},
      {"cluster", "speed", Kind::Speed},        {"cluster", "core", Kind::Cores},
      {"cluster", "bw", Kind::Bandwidth},       {"cluster", "lat", Kind::Latency},
      {"cluster", "bb_bw", Kind::Bandwidth},    {"cluster", "bb_lat", Kind::Latency},
      {"cluster", "loopback_bw", Kind::Bandwidth}, {"cluster", "loopback_lat", Kind::Latency},
      {"cluster", "limiter_link", Kind::Bandwidth}, {"cluster", "radical", Kind::Radical},
      {"cabinet", "speed", Kind::Speed},        {"cabinet", "bw", Kind::Bandwidth},
      {"cabinet", "lat", Kind::Latency},        {"cabinet", "radical", Kind::Radical},
      {"peer", "speed", Kind::Speed},           {"peer", "bw_in", Kind::Bandwidth},
      {"peer", "bw_out", Kind::Bandwidth},      {"peer", "lat", Kind::Latency},
      {"link", "bandwidth", Kind::Bandwidth},   {"link", "latency", Kind::Latency},
      {"backbone", "bandwidth", Kind::Bandwidth}, {"backbone", "latency", Kind::Latency}};
  // Routing kinds of a <zone> SimGrid 3.32 knows ("Not a valid model!" for the others, the
  // cluster topologies among them: a <cluster topology=...> makes those).
  static const std::vector<std::string> routings{"Full", "Floyd", "Dijkstra", "DijkstraCache",
                                                 "None", "Vivaldi", "Wifi", "Cluster"};
  for (const auto& zone : doc.select_nodes("//zone[@routing]")) {
    const std::string routing = zone.node().attribute("routing").value();
    if (std::find(routings.begin(), routings.end(), routing) == routings.end())
      throw InputError(where(zone.node()), "<zone routing=\"" + routing + "\">; expected one of Full, Floyd, "
                                           "Dijkstra, DijkstraCache, None, Vivaldi, Wifi, Cluster (a fat tree, torus "
                                           "or dragonfly is a <cluster topology=...>)");
    if (routing == "None" && (zone.node().child("route") || zone.node().child("zoneRoute")))
      throw InputError(where(zone.node().child("route") ? zone.node().child("route") : zone.node().child("zoneRoute")),
                       "a route in a <zone routing=\"None\">, which takes none; expected routing=\"Full\" for a zone "
                       "with routes");
  }
  if (const auto include = doc.select_node("//include"))
    throw InputError(where(include.node()), "<include> (SimGrid 3.32 aborts on it); expected the platform in one file");
  // Aborts: elements SimGrid 3.32 no longer has, and a deployment's actors.
  if (const auto storage = doc.select_node("//storage_type | //storage | //mount"))
    throw InputError(where(storage.node()), "<" + std::string(storage.node().name()) +
                                                "> (removed in SimGrid 3.27, which aborts on it); expected <disk> "
                                                "elements inside a <host>");
  if (const auto actor = doc.select_node("//actor | //process"))
    throw InputError(where(actor.node()), "<" + std::string(actor.node().name()) +
                                              "> in a platform (a deployment's element); expected a platform only: "
                                              "the model creates its actors");
  // std::stod's exception (exit 1) without one.
  if (const auto cluster = doc.select_node("//cluster[not(@radical)] | //cabinet[not(@radical)]"))
    throw InputError(where(cluster.node()), "<" + std::string(cluster.node().name()) +
                                                "> without radical; expected radical=\"0-15\" or another list of "
                                                "numbers and ranges");
  for (const auto& a : attributes)
    for (const auto& hit : doc.select_nodes((std::string("//") + a.element + "[@" + a.name + "]").c_str())) {
      const pugi::xml_node n = hit.node();
      const std::string text = n.attribute(a.name).value();
      const std::string at = where(n);
      const std::string what = std::string("<") + a.element + "> " + a.name + "='" + text + "'";
      auto whole = [](const std::string& t, long long most) {
        if (t.empty() || t.size() > 12 || !std::all_of(t.begin(), t.end(), [](unsigned char c) { return std::isdigit(c); }))
          return -1LL;
        const long long v = std::stoll(t);
        return v <= most ? v : -1LL;
      };
      switch (a.kind) {
        case Kind::Cores:
          if (whole(text, 1 << 20) < 1)
            throw InputError(at, what + "; expected a whole number of cores from 1 to 1048576");
          break;
        case Kind::Radical: {
          std::stringstream items(text);
          std::string item;
          // "0-3," or ",0-3" ended in std::stod's exception (exit 1).
          bool ok = !text.empty() && text.front() != ',' && text.back() != ',' && text.find(",,") == std::string::npos;
          while (ok && std::getline(items, item, ',')) {
            const auto dash = item.find('-');
            const long long lo = whole(item.substr(0, dash), 2147483647LL);
            const long long hi = dash == std::string::npos ? lo : whole(item.substr(dash + 1), 2147483647LL);
            ok = lo >= 0 && hi >= lo;
          }
          if (!ok)
            throw InputError(at, what + "; expected numbers and ranges such as 0-15,32 (from 0 to 2^31 - 1)");
          break;
        }
        default: {
          const Quantity q = a.kind == Kind::Speed ? Quantity::Speed
                             : a.kind == Kind::Bandwidth ? Quantity::Bandwidth
                                                         : Quantity::Time;
          std::stringstream items(text);
          std::string item;
          // As a scenario's quantities (the kernel's bounds): a latency of inf, or a speed of
          // 1e-300 flop/s, took the clock to infinity ("deadlocked at t=inf", exit 1).
          const char* expected = a.kind == Kind::Latency  ? "; expected a latency from 0 to 1e6 s"
                                 : a.kind == Kind::Speed ? "; expected a speed from 1 flop/s to 1e21 flop/s"
                                                         : "; expected a bandwidth from 1 B/s to 1e18 B/s";
          const double least = a.kind == Kind::Latency ? 0 : 1;
          const double most = a.kind == Kind::Latency ? 1e6 : a.kind == Kind::Speed ? 1e21 : 1e18;
          while (std::getline(items, item, ',')) {
            double v = 0;
            try {
              v = parse_quantity(q, item, at);
            } catch (const InputError& e) {
              // SimGrid's parser names what it cannot read, at its line; a number and unit past a
              // double (1e308Mbps) it reads as inf.
              if (std::isfinite(std::strtod(item.c_str(), nullptr)) &&
                  std::string(e.what()).find("is not a finite number") == std::string::npos)
                continue;
              v = HUGE_VAL;
            }
            if (!(v >= least && v <= most) || (a.kind != Kind::Latency && !(v > 0)))
              throw InputError(at, what + expected);
          }
        }
      }
    }
}

/** The type SimGrid declared each configuration item with ("boolean", "int", "double",
 *  "string"), read from the list SimGrid gives with its error on a name it does not know:
 *  "  name: (type)value" lines. */
const std::map<std::string, std::string>& simgrid_config_types()
{
  static const std::map<std::string, std::string> types = [] {
    std::map<std::string, std::string> out;
    try {
      simgrid::config::is_default("simcore/no-such-item");
    } catch (const std::exception& e) {
      std::istringstream lines(e.what());
      for (std::string line; std::getline(lines, line);) {
        const auto colon = line.find(": (");
        const auto close = line.find(')', colon == std::string::npos ? 0 : colon);
        if (line.rfind("  ", 0) == 0 && colon != std::string::npos && close != std::string::npos)
          out[line.substr(2, colon - 2)] = line.substr(colon + 3, close - colon - 3);
      }
    }
    return out;
  }();
  return types;
}

/** A platform <config> item's value of the item's type: SimGrid 3.32 threw a bare exception
 *  on another ("not a boolean": exit 1). */
void check_platform_config_value(const std::string& name, const std::string& value, const std::string& where)
{
  const auto type = simgrid_config_types().find(name);
  if (type == simgrid_config_types().end())
    return;
  const auto refuse = [&](const char* expected) {
    throw InputError(where, "SimGrid configuration '" + name + "' = '" + value + "'; expected " + expected);
  };
  char* end = nullptr;
  errno = 0;
  if (type->second == "boolean") {
    static const char* const words[] = {"yes", "no", "on", "off", "true", "false", "1", "0"};
    if (std::none_of(std::begin(words), std::end(words), [&value](const char* w) { return value == w; }))
      refuse("yes or no (on, off, true, false, 1, 0)");
  } else if (type->second == "int") {
    const long v = std::strtol(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || errno != 0 || v < INT_MIN || v > INT_MAX)
      refuse("a whole number");
  } else if (type->second == "double") {
    const double v = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !std::isfinite(v))
      refuse("a number");
  }
}

/** The platform in the spelling of DTD 4.1, which the checks read: SimGrid 3.32 also reads
 *  version 4.0's <AS>, <ASroute> and <bypassASroute>, and FULLDUPLEX for SPLITDUPLEX. A
 *  renamed element's place in the file goes into `offsets` (pugixml finds it from the name). */
void spell_as_dtd_4_1(pugi::xml_node node, std::map<const void*, std::ptrdiff_t>& offsets)
{
  static const std::pair<const char*, const char*> renamed[] = {
      {"AS", "zone"}, {"ASroute", "zoneRoute"}, {"bypassASroute", "bypassZoneRoute"}};
  for (auto n : node.children()) {
    for (const auto& [old_name, new_name] : renamed)
      if (std::string(n.name()) == old_name) {
        offsets[n.internal_object()] = n.offset_debug();
        n.set_name(new_name);
      }
    if (auto policy = n.attribute("sharing_policy"); policy && std::string(policy.value()) == "FULLDUPLEX")
      policy.set_value("SPLITDUPLEX");
    spell_as_dtd_4_1(n, offsets);
  }
}

/** SimGrid's own parser reports a missing DOCTYPE or a wrong root element as an obscure
 *  "Unexpected character in prolog"; say what is expected instead. Returns where the first
 *  link with a bandwidth trace is ("FILE:LINE"), or "" for none. */
std::string precheck_platform(const std::string& path)
{
  pugi::xml_document doc;
  // Tabs and line breaks in attributes as they are (SimGrid's parser keeps them; pugixml would
  // make them spaces).
  auto res = doc.load_file(path.c_str(), (pugi::parse_default | pugi::parse_doctype) & ~pugi::parse_wconv_attribute);
  if (res.status == pugi::status_no_document_element) {
    // SimGrid 3.32 reads a file of comments alone (a platform cut short) as an empty platform.
    std::ifstream in(path, std::ios::binary);
    const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    throw InputError(path + ":" + std::to_string(1 + std::count(all.begin(), all.end(), '\n') -
                                                 (!all.empty() && all.back() == '\n' ? 1 : 0)),
                     "the file ends before any element; expected a <platform version=\"4.1\"> element "
                     "(is the file cut short?)");
  }
  if (!res)
    return ""; // SimGrid reports XML syntax errors with their line
  bool doctype = false;
  for (const auto& n : doc.children())
    if (n.type() == pugi::node_doctype)
      doctype = true;
  std::map<const void*, std::ptrdiff_t> renamed_offsets;
  std::string text; // read where a line is named
  const auto where = [&](const pugi::xml_node& n) {
    if (text.empty()) {
      std::ifstream in(path, std::ios::binary);
      text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    const auto renamed = renamed_offsets.find(n.internal_object());
    const auto offset = static_cast<std::size_t>(renamed == renamed_offsets.end() ? n.offset_debug() : renamed->second);
    return path + ":" +
           std::to_string(1 + std::count(text.begin(), text.begin() + static_cast<long>(std::min(offset, text.size())), '\n'));
  };
  const std::string root = doc.document_element().name();
  if (root != "platform")
    throw InputError(where(doc.document_element()),
                     "root element is <" + root + ">; expected a SimGrid platform (<platform version=\"4.1\">)");
  spell_as_dtd_4_1(doc.document_element(), renamed_offsets);
  // SimGrid 3.32 reads version with std::stod: "1e400" ended in its exception (exit 1).
  if (const auto version = doc.document_element().attribute("version")) {
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(version.value(), &end);
    if (end == version.value() || errno == ERANGE || !std::isfinite(v))
      throw InputError(where(doc.document_element()), "<platform version=\"" + std::string(version.value()) +
                                 "\">; expected version=\"4.1\" (or 4, which SimGrid 3.32 also reads)");
  }
  if (!doctype)
    throw InputError(where(doc.document_element()),
                     "<platform> without a <!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\"> line "
                     "before it; expected that line after the <?xml?> line (SimGrid's parser needs it)");
  // SimGrid's Constant network model aborts the process on the first link the platform makes.
  const auto own_model = doc.select_node("//config/prop[@id='network/model']");
  if ((own_model ? std::string(own_model.node().attribute("value").value())
                 : simgrid::config::get_value<std::string>("network/model")) == "Constant")
    for (const auto* kind : {"link", "cluster", "cabinet", "backbone", "peer"})
      if (const auto node = doc.select_node((std::string("//") + kind).c_str()); node)
        throw InputError(where(node.node()),
                         std::string("<") + kind + "> under network/model Constant, which has no links; expected a "
                                                   "platform without links (routing=\"None\") or another network model");
  // The platform's own <config> items: what SimGrid aborts on there is what it aborts on in a
  // scenario's <config> or --cfg.
  for (const auto& prop : doc.select_nodes("//config/prop")) {
    const std::string name = prop.node().attribute("id").value();
    check_simgrid_config_item(name, prop.node().attribute("value").value(), where(prop.node()));
    try { // SimGrid throws a bare exception on a name it does not know, and lists every name it does
      simgrid::config::is_default(name.c_str());
    } catch (const std::exception& e) {
      throw InputError(where(prop.node()), "SimGrid configuration '" + name + "' is not one SimGrid " +
                                               "knows; expected an item listed by SimGrid's --help-cfg");
    }
    check_platform_config_value(name, prop.node().attribute("value").value(), where(prop.node()));
  }
  // Every model places its actors on hosts (one took the first of none: SIGSEGV).
  if (!doc.select_node("//host | //cluster | //cabinet | //peer"))
    throw InputError(where(doc.document_element()),
                     "the platform holds no host; expected at least one <host> (or a <cluster> of one or more)");
  check_platform_values(doc, where);
  check_cluster_topologies(doc, where);
  check_platform_elements(doc, where);
  check_platform_names(doc, where);
  check_zone_routes(doc, where);
  check_platform_traces(doc, path, where);
  // A host or link turned off fails the actors and communications on it, which no model
  // handles (exit 1, "NetworkFailureException raised in kernel mode").
  for (const auto& hit : doc.select_nodes("//host[@state_file!=''] | //link[@state_file!=''] | //peer[@state_file!=''] | "
                                          "//trace_connect[@kind='HOST_AVAIL' or @kind='LINK_AVAIL']")) {
    const pugi::xml_node n = hit.node();
    const std::string element = n.name();
    const std::string kind = n.attribute("kind").value();
    const bool link = element == "link" || kind == "LINK_AVAIL";
    throw InputError(where(n), (element == "trace_connect" ? "<trace_connect kind=\"" + kind + "\">"
                                                           : "<" + element + " state_file=...>") +
                                   " turns a " + (link ? "link" : "host") +
                                   " off and on, and simcore's models assume hosts and links that never fail; "
                                   "expected no state trace (speed_file, bandwidth_file and latency_file vary rates)");
  }
  // A Dijkstra zone without routes has no graph, and SimGrid 3.32 crashes (SIGSEGV in
  // xbt_graph_node_get_data) routing a host of it, even to itself.
  for (const char* routing : {"Dijkstra", "DijkstraCache"})
    for (const auto& zone : doc.select_nodes((std::string("//zone[@routing='") + routing + "']").c_str()))
      if (!zone.node().child("route") && !zone.node().child("zoneRoute"))
        throw InputError(where(zone.node()), std::string("<zone routing=\"") + routing +
                                                 "\"> without <route>; expected routes between its hosts, or "
                                                 "routing=\"Full\" or \"Floyd\" (SimGrid 3.32 crashes routing a "
                                                 "host of such a zone)");
  const auto bandwidth_trace = doc.select_node("//link[@bandwidth_file!='']");
  return bandwidth_trace ? where(bandwidth_trace.node()) : "";
}

} // namespace

void load_platform(simgrid::s4u::Engine& engine, const std::string& path)
{
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw InputError(path, std::string(!std::filesystem::exists(path, ec)        ? "platform file does not exist"
                                       : std::filesystem::is_directory(path, ec) ? "is a folder"
                                                                                 : "is not a regular file") +
                               "; expected a SimGrid XML platform (DTD 4.1)");
  const std::string bandwidth_trace = precheck_platform(path);
  // SimGrid's message, one line of it, with what was expected where it says nothing of it.
  const auto refuse = [&path](const std::string& where, std::string what) -> InputError {
    what = what.substr(0, what.find('\n'));
    while (!what.empty() && (what.back() == '.' || what.back() == ' ' || what.back() == ':'))
      what.pop_back();
    if (what.find("expected") == std::string::npos || what.find("as expected") != std::string::npos)
      what += what.rfind("unknown unit", 0) == 0
                  ? "; expected a unit of SimGrid's: f, kf, Mf, Gf (speeds), Bps, kBps, MBps, GBps, bps, Gbps "
                    "(bandwidths), s, ms, us, ns (times), B, kB, MB, KiB, MiB (sizes)"
                  : "; expected a platform that follows SimGrid's DTD 4.1 and names hosts, links and zones it "
                    "declares";
    return InputError(where.empty() ? path : where, "invalid platform: " + what);
  };
  try {
    engine.load_platform(path);
  } catch (const simgrid::ParseError& e) {
    // SimGrid reports "Parse error at FILE:LINE: what".
    std::string msg = e.what();
    const std::string prefix = "Parse error at ";
    if (msg.rfind(prefix, 0) == 0) {
      msg = msg.substr(prefix.size());
      if (const auto sep = msg.find(": "); sep != std::string::npos)
        throw refuse(msg.substr(0, sep), msg.substr(sep + 2));
    }
    throw refuse("", msg);
  } catch (const std::invalid_argument& e) {
    throw refuse("", e.what());
  } catch (const simgrid::Exception& e) {
    throw refuse("", e.what());
  }
  // SimGrid 3.32 changes the sharing penalty of the messages crossing a link whose bandwidth
  // changes, those still in their latency included: under the Lazy optimisation they were lost
  // (the run deadlocked), under Full their latency ended at once. Without weight-S there is no
  // penalty to change.
  if (const double weight_s = simgrid::config::get_value<double>("network/weight-S");
      !bandwidth_trace.empty() && weight_s > 0)
    throw InputError(bandwidth_trace, "<link bandwidth_file=...> under network/weight-S " + std::to_string(std::lround(weight_s)) +
                                          (simgrid::config::is_default("network/weight-S") ? " (the network model's default)" : "") +
                                          ": SimGrid 3.32 loses a message crossing "
                                          "the link when its bandwidth changes during the message's latency (the "
                                          "run deadlocks; under network/optim:Full the latency ends at once); "
                                          "expected network/weight-S:0 (a <config> item or --cfg), or no "
                                          "bandwidth trace");
  // Every model places its actors on hosts (one took the first of none: SIGSEGV).
  if (engine.get_host_count() == 0)
    throw InputError(path, "the platform holds no host; expected at least one <host> (or a <cluster> of one or more)");
}

namespace {

/** A platform file read again for a question about it: its document and its text. */
struct PlatformText {
  pugi::xml_document doc;
  std::string text;
  bool loaded = false;
  explicit PlatformText(const std::string& path)
  {
    if (!doc.load_file(path.c_str()))
      return;
    std::ifstream in(path, std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    loaded = true;
  }
  /** "FILE:LINE (what)" of a node. */
  std::string at(const std::string& path, const pugi::xml_node& n, const std::string& what) const
  {
    const auto offset = static_cast<std::size_t>(std::max<std::ptrdiff_t>(n.offset_debug(), 0));
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<long>(std::min(offset, text.size())), '\n');
    return path + ":" + std::to_string(line) + " (" + what + ")";
  }
};

} // namespace

std::string platform_config_origin(const std::string& path, const std::string& name)
{
  const PlatformText platform(path);
  if (!platform.loaded)
    return "";
  // The first one: SimGrid keeps the first value of an item within a <config>, and sets an
  // item from a later <config> only while it still has its default.
  for (const auto& prop : platform.doc.select_nodes("//config/prop"))
    if (prop.node().attribute("id").value() == name)
      return platform.at(path, prop.node(), "<prop id=\"" + name + "\">");
  return "";
}

std::map<std::string, std::string> hosts_with_speed_profile(const std::string& path)
{
  std::map<std::string, std::string> out;
  const PlatformText platform(path);
  if (!platform.loaded)
    return out;
  const auto at = [&](const pugi::xml_node& n, const char* what) { return platform.at(path, n, what); };
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
  visit(platform.doc);
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
  // SimGrid splits "name:value" at spaces and aborts on what is left ("Option 'a' badly
  // formatted"), and aborts on names of other characters (1, or 0,0,0).
  const bool name_ok = !name.empty() && std::isalpha(static_cast<unsigned char>(name.front())) &&
                       std::all_of(name.begin(), name.end(), [](unsigned char c) {
                         return std::isalnum(c) || c == '/' || c == '-' || c == '_';
                       });
  if (!name_ok)
    throw InputError(where, "SimGrid configuration name '" + name +
                                "'; expected letters, digits, '/', '-' and '_', as in network/model");
  if (std::any_of(value.begin(), value.end(), [](unsigned char c) { return std::isspace(c); }))
    throw InputError(where, "SimGrid configuration '" + name + "' = '" + value + "'; expected a value without spaces");
  // Items SimGrid 3.32 takes and then aborts on, whatever the platform or the model: the
  // debugger's and the model checker's (a breakpoint is SIGTRAP), the platform's trace (it
  // found no container for a cluster), the selective update off (it needs the Full optimisation).
  for (const char* prefix : {"debug/", "model-check", "tracing/platform"})
    if (name.rfind(prefix, 0) == 0)
      throw InputError(where, "SimGrid configuration '" + name +
                                  "' is not one simcore runs with (SimGrid 3.32 aborts on it in simcore's simulations); "
                                  "expected another item");
  if ((name == "network/maxmin-selective-update" || name == "cpu/maxmin-selective-update") &&
      !(value == "yes" || value == "1" || value == "true" || value == "on"))
    throw InputError(where, "SimGrid configuration '" + name + "' = '" + value +
                                "'; expected yes (SimGrid 3.32 aborts without it under the Lazy optimisation, its "
                                "default)");
  if (name == "smpi/host-speed") {
    const double speed = parse_quantity(Quantity::Speed, value, where);
    if (!(speed > 0) || !std::isnormal(speed))
      throw InputError(where, "SimGrid configuration 'smpi/host-speed' = '" + value + "'; expected a positive speed");
    return;
  }
  // Numbers SimGrid takes and then aborts on (a loopback bandwidth or factor of 0, a stack of
  // 0 KiB, a negative precision), silently misreads (a negative latency, as 0) or runs forever
  // with (a timing precision of 0): each within what a simulation can use.
  struct Range {
    double least, most;
    const char* what;
  };
  static const std::map<std::string, Range> numbers{
      {"network/loopback-bw", {1, 1e18, "a bandwidth from 1 to 1e18 B/s, in B/s"}},
      {"network/loopback-lat", {0, 1e6, "a latency from 0 to 1e6 s, in s"}},
      {"network/latency-factor", {1e-12, 1e12, "a factor from 1e-12 to 1e12"}},
      {"network/bandwidth-factor", {1e-12, 1e12, "a factor from 1e-12 to 1e12"}},
      {"maxmin/precision", {1e-15, 0.1, "a precision from 1e-15 to 0.1"}},
      {"surf/precision", {1e-15, 1e-3, "a precision from 1e-15 to 1e-3 s"}},
      {"contexts/stack-size", {16, 1048576, "a stack size from 16 to 1048576 KiB"}}};
  if (const auto range = numbers.find(name); range != numbers.end()) {
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    const bool number = !value.empty() && end == value.c_str() + value.size() &&
                        value.find_first_of("xX") == std::string::npos &&
                        !std::isspace(static_cast<unsigned char>(value.front()));
    if (!number || !(v >= range->second.least && v <= range->second.most))
      throw InputError(where, "SimGrid configuration '" + name + "' = '" + value + "'; expected " + range->second.what);
    return;
  }
  // SimGrid 3.32's choices (--help-models), but ns-3, whose network model needs a platform of
  // its own (SimGrid's ns-3 build crashed on ours with a floating-point exception).
  static const std::map<std::string, std::vector<std::string>> choices{
      {"host/model", {"default", "compound", "ptask_L07"}},
      {"cpu/model", {"Cas01"}},
      {"network/model", {"LV08", "Constant", "SMPI", "IB", "CM02"}},
      {"network/optim", {"Lazy", "TI", "Full"}},
      {"cpu/optim", {"Lazy", "Full"}}, // TI: "Multi-core not handled by this model yet", an abort
      {"disk/model", {"default"}},
      {"plugin", {"host_energy", "link_energy", "link_energy_wifi", "host_load", "link_load", "host_dvfs"}}};
  const auto it = choices.find(name);
  if (it == choices.end() || std::find(it->second.begin(), it->second.end(), value) != it->second.end())
    return;
  std::string list;
  for (const auto& c : it->second)
    list += (list.empty() ? "" : ", ") + c;
  throw InputError(where, "SimGrid configuration '" + name + "' = '" + value + "'; expected one of " + list);
}

} // namespace simcore
