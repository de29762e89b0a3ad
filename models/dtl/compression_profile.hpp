/* A compressor's ratio/accuracy profile: measured (error bound -> ratio, costs) points, as
 * lossy compressors such as SZ or ZFP are characterised; a stream picks an error bound and
 * gets the ratio and costs interpolated between the nearest points. */
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace dtl {

struct CompressionPoint {
  double error_bound;
  double ratio;
  double compress_flops_per_byte;
  double decompress_flops_per_byte;
};

class CompressionProfile {
public:
  /** Reads {"points": [{"error_bound": 1e-3, "ratio": 12, "compress_flops_per_byte": 40,
   *  "decompress_flops_per_byte": 15}, ...]}; errors name the file, the line and the point. */
  static CompressionProfile load(const std::string& path);
  /** The same from parsed JSON; errors name `path` and the point ("path (points[2])"). */
  static CompressionProfile from_json(const nlohmann::json& j, const std::string& path);
  /** Linear interpolation in log10(error bound); InputError(where) outside the measured range. */
  CompressionPoint at(double error_bound, const std::string& where) const;
  const std::vector<CompressionPoint>& points() const { return points_; }

private:
  std::string path_;
  std::vector<CompressionPoint> points_; ///< sorted by error bound
};

} // namespace dtl
