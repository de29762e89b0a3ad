/* The interface every model implements. */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace simcore {

class SimContext;
class Results;

/** Memory a run is sure to take once set up: what its model will record while it runs and
 *  report at its end, counted from the sizes the scenario gives. A lower bound, never a guess
 *  from above: the kernel refuses a run before it starts when this alone passes its limit. */
struct MemoryNeed {
  std::uint64_t bytes = 0;
  std::string what; ///< how it was counted: "1,000,000 tasks x 64 B (the tasks table)"
};

/** A table the run is sure to write, counted before it starts from the sizes the scenario
 *  gives: its name, and at least this many rows of exactly this many columns. */
struct TableSize {
  std::string name;
  std::uint64_t rows = 0;
  std::uint64_t columns = 0;
};

/** A model creates its actors on the loaded platform, the kernel runs the simulation,
 *  then the model reports metrics and tables. One model instance per simulation. */
class Model {
public:
  virtual ~Model() = default;
  /** Called once the platform is loaded and calibrated, before the simulation starts.
   *  Parameters are already validated; throw InputError for inconsistencies that depend
   *  on the platform (e.g. a host name that does not exist). */
  virtual void setup(SimContext& ctx) = 0;
  /** Called after setup(): the memory the run will take on top of what setup() took (records
   *  that grow with steps, tasks or iterations, the tables of report()). None by default. */
  virtual MemoryNeed memory_need(const SimContext& /*ctx*/) const { return {}; }
  /** Called after setup(): the tables report() will fill, with lower bounds of their rows
   *  (tables whose rows are not known before the run may be left out). The kernel refuses a
   *  run whose result files are sure not to fit on the output folder's disk. None by default. */
  virtual std::vector<TableSize> table_sizes(const SimContext& /*ctx*/) const { return {}; }
  /** Called after the simulation ended; simulated time is final. */
  virtual void report(const SimContext& ctx, Results& results) = 0;
};

} // namespace simcore
