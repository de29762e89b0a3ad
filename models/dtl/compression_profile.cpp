#include "compression_profile.hpp"

#include <simcore/error.hpp>
#include <simcore/json_locations.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>

namespace dtl {

CompressionProfile CompressionProfile::load(const std::string& path)
{
  std::ifstream in(path);
  if (!in)
    throw simcore::InputError(path, "cannot read the compression profile; expected a JSON file");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<long>(std::min<std::size_t>(e.byte, text.size())), '\n');
    throw simcore::InputError(path + ":" + std::to_string(line),
                              std::string("malformed JSON (") + e.what() + "); expected {\"points\": [...]}");
  }
  try {
    return from_json(j, path);
  } catch (const simcore::InputError& e) { // located by its JSON path: give it the line as well
    throw simcore::JsonLocations(text).locate(e, path);
  }
}

CompressionProfile CompressionProfile::from_json(const nlohmann::json& j, const std::string& path)
{
  CompressionProfile p;
  p.path_ = path;
  if (!j.is_object() || !j.contains("points") || !j["points"].is_array() || j["points"].size() < 1)
    throw simcore::InputError(path, "expected {\"points\": [{\"error_bound\": ..., \"ratio\": ..., "
                                    "\"compress_flops_per_byte\": ..., \"decompress_flops_per_byte\": ...}, ...]}");
  for (std::size_t i = 0; i < j["points"].size(); i++) {
    const auto& pt = j["points"][i];
    const std::string where = path + " (points[" + std::to_string(i) + "])";
    for (const char* key : {"error_bound", "ratio", "compress_flops_per_byte", "decompress_flops_per_byte"})
      if (!pt.is_object() || !pt.contains(key) || !pt[key].is_number())
        throw simcore::InputError(where, std::string("expected a number for \"") + key + "\"");
    CompressionPoint c{pt["error_bound"].get<double>(), pt["ratio"].get<double>(),
                       pt["compress_flops_per_byte"].get<double>(), pt["decompress_flops_per_byte"].get<double>()};
    if (!(c.error_bound > 0) || !(c.ratio >= 1) || c.compress_flops_per_byte < 0 || c.decompress_flops_per_byte < 0)
      throw simcore::InputError(where, "expected error_bound > 0, ratio >= 1 and costs >= 0");
    p.points_.push_back(c);
  }
  std::vector<std::size_t> order(p.points_.size()); // indices in the file, by error bound
  for (std::size_t k = 0; k < order.size(); k++)
    order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return p.points_[a].error_bound < p.points_[b].error_bound; });
  std::vector<CompressionPoint> sorted;
  for (std::size_t k = 0; k < order.size(); k++) {
    const auto& c = p.points_[order[k]];
    if (k > 0 && c.error_bound == sorted.back().error_bound)
      throw simcore::InputError(path + " (points[" + std::to_string(std::max(order[k], order[k - 1])) + "])",
                                "a second point with error_bound " + nlohmann::json(c.error_bound).dump() +
                                    " (the other is points[" +
                                    std::to_string(std::min(order[k], order[k - 1])) +
                                    "]); expected distinct error bounds");
    sorted.push_back(c);
  }
  p.points_ = std::move(sorted);
  return p;
}

CompressionPoint CompressionProfile::at(double error_bound, const std::string& where) const
{
  const auto& lo = points_.front();
  const auto& hi = points_.back();
  if (error_bound < lo.error_bound || error_bound > hi.error_bound)
    throw simcore::InputError(where, "error bound " + std::to_string(error_bound) + " lies outside the profile " +
                                         path_ + " (" + std::to_string(lo.error_bound) + " to " +
                                         std::to_string(hi.error_bound) + "); expected a bound it measured");
  if (error_bound == lo.error_bound)
    return lo;
  std::size_t i = 1; // first point at or above the bound (exists: the bound is within range)
  while (points_[i].error_bound < error_bound)
    i++;
  if (points_[i].error_bound == error_bound)
    return points_[i];
  const auto& a = points_[i - 1];
  const auto& b = points_[i];
  const double t = (std::log10(error_bound) - std::log10(a.error_bound)) /
                   (std::log10(b.error_bound) - std::log10(a.error_bound));
  auto mix = [t](double x, double y) { return x + t * (y - x); };
  return CompressionPoint{error_bound, mix(a.ratio, b.ratio), mix(a.compress_flops_per_byte, b.compress_flops_per_byte),
                          mix(a.decompress_flops_per_byte, b.decompress_flops_per_byte)};
}

} // namespace dtl
