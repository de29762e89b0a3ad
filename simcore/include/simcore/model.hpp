/* The interface every model implements. */
#pragma once

namespace simcore {

class SimContext;
class Results;

/** A model creates its actors on the loaded platform, the kernel runs the simulation,
 *  then the model reports metrics and tables. One model instance per simulation. */
class Model {
public:
  virtual ~Model() = default;
  /** Called once the platform is loaded and calibrated, before the simulation starts.
   *  Parameters are already validated; throw InputError for inconsistencies that depend
   *  on the platform (e.g. a host name that does not exist). */
  virtual void setup(SimContext& ctx) = 0;
  /** Called after the simulation ended; simulated time is final. */
  virtual void report(const SimContext& ctx, Results& results) = 0;
};

} // namespace simcore
