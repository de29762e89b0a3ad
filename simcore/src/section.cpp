#include "simcore/section.hpp"

namespace simcore {

std::vector<const Section*> Section::children_named(const std::string& name) const
{
  std::vector<const Section*> out;
  for (const auto& c : children_)
    if (c.name() == name)
      out.push_back(&c);
  return out;
}

nlohmann::ordered_json Section::to_json() const
{
  nlohmann::ordered_json j;
  j["element"] = name_;
  j["attributes"] = attributes_.to_json();
  if (!children_.empty()) {
    j["children"] = nlohmann::ordered_json::array();
    for (const auto& c : children_)
      j["children"].push_back(c.to_json());
  }
  return j;
}

} // namespace simcore
