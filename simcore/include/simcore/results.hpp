/* What a model reports at the end of a run: scalar metrics and tables (time series). */
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <deque>
#include <iterator>
#include <map>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace simcore {

/** One column of a table: a name, a unit ("s", "B", "" for none) and its values. */
struct Column {
  std::string name;
  std::string unit;
  std::variant<std::vector<double>, std::vector<std::int64_t>> values;
  std::size_t size() const;
};

/** A table of equally long columns; written to trace.h5 as one compound dataset. */
class Table {
public:
  Table() = default;
  Table(std::string name, std::string doc) : name_(std::move(name)), doc_(std::move(doc)) {}
  Table& add_column(const std::string& name, const std::string& unit, std::vector<double> values);
  Table& add_column(const std::string& name, const std::string& unit, std::vector<std::int64_t> values);
  /** A column computed from rows: `get(row)` for every row of `rows` (a vector, a map, ...).
   *  Integer results make an int64 column, others a float64 column. Builds a table from a
   *  model's records without one vector per column:
   *    table.add_column("rank", "", ops, [](const Op& o) { return o.rank; })
   *         .add_column("end", "s", ops, [](const Op& o) { return o.end; }); */
  template <typename Rows, typename Get>
  Table& add_column(const std::string& name, const std::string& unit, const Rows& rows, Get get)
  {
    using Value = std::decay_t<decltype(get(*std::begin(rows)))>;
    using Stored = std::conditional_t<std::is_integral_v<Value>, std::int64_t, double>;
    std::vector<Stored> values;
    for (const auto& row : rows)
      values.push_back(static_cast<Stored>(get(row)));
    return add_column(name, unit, std::move(values));
  }
  const std::string& name() const { return name_; }
  const std::string& doc() const { return doc_; }
  const std::vector<Column>& columns() const { return columns_; }
  std::size_t rows() const { return columns_.empty() ? 0 : columns_.front().size(); }

private:
  void check_new_column(const std::string& name, std::size_t size) const;
  std::string name_;
  std::string doc_;
  std::vector<Column> columns_;
};

/** Metrics and tables of a run. Metrics keep insertion order in the summary. */
class Results {
public:
  /** A scalar metric with its unit ("s", "B", "" ...). Names are unique. */
  void set_metric(const std::string& name, double value, const std::string& unit = "");
  void set_metric(const std::string& name, std::int64_t value, const std::string& unit = "");
  /** Any other integer type (int, long, std::size_t ...) is stored as an integer. */
  template <typename T, typename = std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, std::int64_t>>>
  void set_metric(const std::string& name, T value, const std::string& unit = "")
  {
    set_metric(name, static_cast<std::int64_t>(value), unit);
  }
  /** A new table; names are unique. The reference stays valid when more tables are added. */
  Table& add_table(const std::string& name, const std::string& doc = "");

  const nlohmann::ordered_json& metrics() const { return metrics_; }
  const nlohmann::ordered_json& metric_units() const { return units_; }
  const std::deque<Table>& tables() const { return tables_; }

private:
  void check_new_metric(const std::string& name) const;
  nlohmann::ordered_json metrics_ = nlohmann::ordered_json::object();
  nlohmann::ordered_json units_ = nlohmann::ordered_json::object();
  std::deque<Table> tables_;
};

} // namespace simcore
