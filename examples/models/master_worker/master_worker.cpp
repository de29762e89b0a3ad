/* master_worker: SimGrid's classic master/workers, as a how-to for writing a simcore model.
 *
 * A master hands `tasks` tasks out to its workers in round robin. Each task is a message
 * of `task_bytes` (a blocking put: the master waits until the worker has it) followed by
 * `task_flops` of computation on the worker (optionally jittered with seeded randomness). */
#include <simcore/error.hpp>
#include <simcore/model.hpp>
#include <simcore/model_registry.hpp>
#include <simcore/random_draws.hpp>
#include <simcore/results.hpp>
#include <simcore/sim_context.hpp>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include <xbt/log.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <vector>

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(model_master_worker, simcore_models, "master_worker example model");

namespace sg4 = simgrid::s4u;

namespace {

/** What travels from the master to a worker. A negative id tells the worker to stop. */
struct TaskMessage {
  long id;
};

class MasterWorker : public simcore::Model {
public:
  void setup(simcore::SimContext& ctx) override
  {
    const auto& p = ctx.params();
    tasks_ = p.get_int("tasks");
    flops_ = p.get_double("task_flops");
    bytes_ = p.get_double("task_bytes");
    // Work of each task, drawn once up front from the kernel's stream for this purpose.
    const double jitter = p.get_double("flops_jitter");
    auto& rng = ctx.rng("task_flops");
    task_flops_.resize(tasks_);
    for (auto& f : task_flops_)
      f = jitter > 0 ? flops_ * simcore::uniform(rng, 1 - jitter, 1 + jitter) : flops_;

    auto hosts = ctx.hosts_sorted();
    sg4::Host* master = p.get_string("master").empty() ? hosts.front() : ctx.host(p.get_string("master"), "master");
    std::vector<sg4::Host*> others;
    std::copy_if(hosts.begin(), hosts.end(), std::back_inserter(others), [master](auto* h) { return h != master; });
    const auto wanted = p.get_int("workers");
    if (wanted > static_cast<std::int64_t>(others.size()))
      throw ctx.param_error("workers", "parameter 'workers' = " + std::to_string(wanted) +
                                                           " but the platform has only " + std::to_string(others.size()) +
                                                           " hosts besides the master; expected at most that");
    if (wanted > 0)
      others.resize(static_cast<std::size_t>(wanted));
    if (others.empty())
      throw simcore::InputError(ctx.scenario().platform_path(), "the platform has no host for a worker; expected at least 2 hosts");
    workers_ = others;
    std::vector<std::pair<sg4::Host*, sg4::Host*>> routes;
    for (auto* w : workers_)
      routes.emplace_back(master, w);
    ctx.check_routes(routes); // a route the platform lacks: refused, not an abort at the first task

    send_start_.assign(tasks_, 0);
    send_end_.assign(tasks_, 0);
    compute_end_.assign(tasks_, 0);
    busy_.assign(workers_.size(), 0);
    done_.assign(workers_.size(), 0);

    ctx.create_actor("master", master, [this] { run_master(); });
    for (std::size_t w = 0; w < workers_.size(); w++)
      ctx.create_actor("worker-" + std::to_string(w), workers_[w], [this, w] { run_worker(w); });
    XBT_DEBUG("master on %s, %zu workers, %ld tasks", master->get_cname(), workers_.size(), tasks_);
  }

  simcore::MemoryNeed memory_need(const simcore::SimContext&) const override
  {
    // report(): the tasks table's 6 columns, and the 2 it builds before copying them in.
    constexpr std::uint64_t per_task = 8 * sizeof(double);
    return {static_cast<std::uint64_t>(tasks_) * per_task,
            "the tasks table (" + std::to_string(tasks_) + " tasks x " + std::to_string(per_task) + " B)"};
  }

  std::vector<simcore::TableSize> table_sizes(const simcore::SimContext&) const override
  {
    return {{"tasks", static_cast<std::uint64_t>(tasks_), 6}, {"workers", workers_.size(), 3}};
  }

  void report(const simcore::SimContext&, simcore::Results& results) override
  {
    const double makespan = *std::max_element(compute_end_.begin(), compute_end_.end());
    const double busy = std::accumulate(busy_.begin(), busy_.end(), 0.0);
    results.set_metric("makespan", makespan, "s");
    results.set_metric("tasks", static_cast<std::int64_t>(tasks_));
    results.set_metric("workers", static_cast<std::int64_t>(workers_.size()));
    results.set_metric("throughput", makespan > 0 ? tasks_ / makespan : 0.0, "task/s");
    results.set_metric("worker_utilisation", makespan > 0 ? busy / (makespan * workers_.size()) : 0.0);

    std::vector<std::int64_t> ids(tasks_), worker(tasks_);
    for (long k = 0; k < tasks_; k++) {
      ids[k] = k;
      worker[k] = k % static_cast<long>(workers_.size());
    }
    results.add_table("tasks", "one row per task")
        .add_column("task", "", ids)
        .add_column("worker", "", worker)
        .add_column("flops", "flop", task_flops_)
        .add_column("send_start", "s", send_start_)
        .add_column("send_end", "s", send_end_)
        .add_column("compute_end", "s", compute_end_);
    std::vector<std::int64_t> widx(workers_.size());
    std::iota(widx.begin(), widx.end(), 0);
    results.add_table("workers", "one row per worker")
        .add_column("worker", "", widx)
        .add_column("tasks", "", done_)
        .add_column("busy_time", "s", busy_);
  }

private:
  static sg4::Mailbox* mailbox(std::size_t w) { return sg4::Mailbox::by_name("worker-" + std::to_string(w)); }

  void run_master()
  {
    for (long k = 0; k < tasks_; k++) {
      auto* box = mailbox(static_cast<std::size_t>(k) % workers_.size());
      send_start_[k] = sg4::Engine::get_clock();
      box->put(new TaskMessage{k}, bytes_);
      send_end_[k] = sg4::Engine::get_clock();
    }
    for (std::size_t w = 0; w < workers_.size(); w++)
      mailbox(w)->put(new TaskMessage{-1}, 0);
  }

  void run_worker(std::size_t w)
  {
    auto* box = mailbox(w);
    for (;;) {
      std::unique_ptr<TaskMessage> msg(box->get<TaskMessage>());
      if (msg->id < 0)
        return;
      const double start = sg4::Engine::get_clock();
      sg4::this_actor::execute(task_flops_[msg->id]);
      compute_end_[msg->id] = sg4::Engine::get_clock();
      busy_[w] += compute_end_[msg->id] - start;
      done_[w]++;
    }
  }

  long tasks_ = 0;
  double flops_ = 0;
  double bytes_ = 0;
  std::vector<sg4::Host*> workers_;
  std::vector<double> task_flops_, send_start_, send_end_, compute_end_, busy_;
  std::vector<std::int64_t> done_;
};

simcore::ModelInfo make_info()
{
  using simcore::ParamSpec;
  using simcore::ParamType;
  return {"master_worker",
          "master hands tasks out to workers in round robin (SimGrid's classic example)",
          {
              ParamSpec::integer("tasks", 100, "number of tasks").within(1, 1e8),
              ParamSpec::quantity("task_flops", ParamType::Flops, "1Gf", "work of one task").at_least(0),
              ParamSpec::quantity("task_bytes", ParamType::Size, "1MB", "size of one task's input message").at_least(0),
              ParamSpec::integer("workers", 0, "number of workers; 0 uses every host but the master").at_least(0),
              ParamSpec::string("master", "", "host of the master; empty takes the first host by name"),
              ParamSpec::real("flops_jitter", 0, "each task's work is task_flops x U(1-j, 1+j), from stream 'task_flops'")
                  .within(0, 0.999),
          },
          [] { return std::make_unique<MasterWorker>(); }};
}

} // namespace

SIMCORE_REGISTER_MODEL(make_info())
