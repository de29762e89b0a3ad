#include "simcore/results.hpp"
#include "simcore/error.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace simcore {

std::size_t Column::size() const
{
  return std::visit([](const auto& v) { return v.size(); }, values);
}

void Table::check_new_column(const std::string& name, std::size_t size) const
{
  const bool valid = !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '.' || c == '-';
  });
  if (!valid)
    throw InternalError("table '" + name_ + "': column name '" + name + "' must be letters, digits, '_', '.' or '-'");
  for (const auto& c : columns_)
    if (c.name == name)
      throw InternalError("table '" + name_ + "': duplicate column '" + name + "'");
  if (!columns_.empty() && size != rows())
    throw InternalError("table '" + name_ + "': column '" + name + "' has " + std::to_string(size) +
                        " rows, the others " + std::to_string(rows()));
}

Table& Table::add_column(const std::string& name, const std::string& unit, std::vector<double> values)
{
  check_new_column(name, values.size());
  columns_.push_back(Column{name, unit, std::move(values)});
  return *this;
}

Table& Table::add_column(const std::string& name, const std::string& unit, std::vector<std::int64_t> values)
{
  check_new_column(name, values.size());
  columns_.push_back(Column{name, unit, std::move(values)});
  return *this;
}

void Results::check_new_metric(const std::string& name) const
{
  if (name.empty() || metrics_.contains(name))
    throw InternalError("metric '" + name + "' is empty or reported twice");
}

void Results::set_metric(const std::string& name, double value, const std::string& unit)
{
  check_new_metric(name);
  if (std::isfinite(value))
    metrics_[name] = value;
  else
    metrics_[name] = nullptr; // JSON has no NaN/inf
  units_[name] = unit;
}

void Results::set_metric(const std::string& name, std::int64_t value, const std::string& unit)
{
  check_new_metric(name);
  metrics_[name] = value;
  units_[name] = unit;
}

Table& Results::add_table(const std::string& name, const std::string& doc)
{
  if (name.empty() || name.find('/') != std::string::npos)
    throw InternalError("invalid table name '" + name + "'");
  for (const auto& t : tables_)
    if (t.name() == name)
      throw InternalError("table '" + name + "' added twice");
  tables_.emplace_back(name, doc);
  return tables_.back();
}

} // namespace simcore
