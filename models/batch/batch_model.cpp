/* batch: registration, parameters, the event loop that drives the scheduler in simulated
 * time (jobs run as SimGrid executions on their first node), and the report. */
#include "cluster.hpp"
#include "scheduler.hpp"
#include "swf.hpp"
#include "wait_features.hpp"
#include "wait_predictors.hpp"
#include "workload.hpp"

#include <simcore/error.hpp>
#include <simcore/name_pattern.hpp>
#include <simcore/model.hpp>
#include <simcore/model_registry.hpp>
#include <simcore/quantile.hpp>
#include <simcore/results.hpp>
#include <simcore/running_stats.hpp>
#include <simcore/sim_context.hpp>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Host.hpp>
#include <xbt/log.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <queue>
#include <regex>

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(model_batch, simcore_models, "batch: Slurm-like batch scheduler");

namespace sg4 = simgrid::s4u;

namespace {

using simcore::ParamSpec;
using simcore::ParamType;

class BatchModel : public simcore::Model {
public:
  void setup(simcore::SimContext& ctx) override;
  simcore::MemoryNeed memory_need(const simcore::SimContext& ctx) const override;
  std::vector<simcore::TableSize> table_sizes(const simcore::SimContext&) const override
  {
    return {{"jobs", static_cast<std::uint64_t>(workload_.jobs.size()), 15}};
  }
  void report(const simcore::SimContext& ctx, simcore::Results& results) override;

private:
  void run();

  batch::Workload workload_;
  std::optional<batch::Cluster> cluster_;
  std::optional<batch::Priority> priority_;
  std::optional<batch::RuntimePredictor> predictor_;
  std::optional<batch::Scheduler> scheduler_;
  batch::SchedulerConfig config_;
  double bf_interval_ = 0;
  std::vector<sg4::Host*> nodes_;
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> pieces_; ///< per job
  std::vector<sg4::ExecPtr> execs_;                                        ///< per job
  std::int64_t extra_field_lines_ = 0, dropped_status_ = 0;
  std::int64_t peak_busy_cores_ = 0, busy_cores_ = 0;
  // Wait-time prediction.
  bool predict_waits_ = true;
  double train_fraction_ = 0.5, ridge_lambda_ = 1;
  batch::BoostedTreesSettings trees_;
  batch::SwfHeader header_;
  batch::UserHistory history_;
  std::vector<batch::WaitFeatures> features_; ///< per job, at submission
  using Ending = std::pair<double, std::size_t>; ///< (end, job), earliest first
  std::priority_queue<Ending, std::vector<Ending>, std::greater<>> ending_;
};

simcore::MemoryNeed BatchModel::memory_need(const simcore::SimContext&) const
{
  // report(): the jobs table's 15 columns, and the 3 prediction columns it builds before
  // copying them in (the job records themselves were made by setup()).
  constexpr std::uint64_t per_job = 18 * 8;
  const auto jobs = static_cast<std::uint64_t>(workload_.jobs.size());
  return {jobs * per_job, "the jobs table (" + std::to_string(jobs) + " jobs x " + std::to_string(per_job) + " B)"};
}

void BatchModel::setup(simcore::SimContext& ctx)
{
  const auto& p = ctx.params();
  // The machine: nodes matching `hosts`, or as many as `nodes` asks, with their cores.
  std::regex re;
  try {
    re = simcore::compile_name_pattern(p.get_string("hosts"), "", "parameter 'hosts' =");
  } catch (const simcore::InputError& e) {
    throw ctx.param_error("hosts", e.detail());
  }
  for (auto* h : ctx.hosts_sorted())
    if (std::regex_match(h->get_name(), re))
      nodes_.push_back(h);
  if (nodes_.empty())
    throw ctx.param_error("hosts", "parameter 'hosts' = '" + p.get_string("hosts") + "' matches no host; expected a regular expression of host names");
  if (const auto n = p.get_int("nodes"); n > 0) {
    if (n > static_cast<std::int64_t>(nodes_.size()))
      throw ctx.param_error("nodes", "parameter 'nodes' = " + std::to_string(n) + " but only " +
                                         std::to_string(nodes_.size()) + " hosts match 'hosts'; expected at most that");
    nodes_.resize(static_cast<std::size_t>(n));
  }
  std::int64_t cores = p.get_int("cores_per_node");
  if (cores == 0)
    cores = nodes_.front()->get_core_count();
  cluster_.emplace(static_cast<std::int64_t>(nodes_.size()), cores, p.get_string("allocation") == "nodes");

  batch::SwfOptions o;
  o.first_jobs = p.get_int("first_jobs");
  o.window_start = p.get_double("window_start");
  o.window_end = p.get_double("window_end") > 0 ? p.get_double("window_end") : -1;
  o.load_factor = p.get_double("load_factor");
  o.keep_cancelled = p.get_bool("keep_cancelled");
  const auto trace = batch::read_swf(p.get_string("workload"), o);
  extra_field_lines_ = trace.extra_field_lines;
  header_ = trace.header;
  dropped_status_ = trace.dropped_status;
  if (trace.extra_field_lines > 0)
    XBT_WARN("%s: %lld lines have more than the 18 SWF fields; the extra fields are ignored",
             p.get_string("workload").c_str(), static_cast<long long>(trace.extra_field_lines));
  if (trace.header.max_procs > 0 && trace.header.max_procs != cluster_->total_cores())
    XBT_WARN("%s: the trace's machine had %lld processors (MaxProcs), this one has %lld cores",
             p.get_string("workload").c_str(), static_cast<long long>(trace.header.max_procs),
             static_cast<long long>(cluster_->total_cores()));
  workload_ = batch::make_workload(trace, cluster_->total_cores(), p.get_int("repeat"));
  if (workload_.too_large > 0)
    XBT_WARN("%lld jobs ask for more than the %lld cores of the machine: skipped", static_cast<long long>(workload_.too_large),
             static_cast<long long>(cluster_->total_cores()));
  // No job gave a run of zeros (a wait of 0 s, a utilisation of 0) that looked like results.
  if (workload_.jobs.empty())
    throw ctx.param_error("workload", p.get_string("workload") + ": no job to simulate (" +
                                          std::to_string(trace.records.size()) + " kept of the trace, " +
                                          std::to_string(workload_.too_large) + " of them too large for the " +
                                          std::to_string(cluster_->total_cores()) + " cores, " +
                                          std::to_string(workload_.unknown) + " without size or run time; " +
                                          std::to_string(trace.dropped_status) + " cancelled or failed dropped); "
                                          "expected at least one job within first_jobs, window_start and window_end");
  for (auto& j : workload_.jobs)
    j.slots = cluster_->slots_for(j.cores);

  batch::PriorityWeights w;
  w.age = p.get_double("priority_weight_age");
  w.size = p.get_double("priority_weight_job_size");
  w.fairshare = p.get_double("priority_weight_fairshare");
  w.partition = p.get_double("priority_weight_partition");
  w.qos = p.get_double("priority_weight_qos");
  w.max_age = p.get_double("priority_max_age");
  w.decay_half_life = p.get_double("priority_decay_half_life");
  w.favor_small = p.get_bool("priority_favor_small");
  w.partition_priority = p.get_int_list("partition_priorities");
  w.qos_priority = p.get_int_list("qos_priorities");
  priority_.emplace(p.get_string("priority") == "multifactor", w, cluster_->total_cores());
  const std::string runtime = p.get_string("runtime_prediction");
  batch::MlRuntimeSettings ml;
  ml.refit_every = p.get_int("ml_runtime_refit_every");
  ml.window = p.get_int("ml_runtime_window");
  predictor_.emplace(runtime == "tsafrir" ? batch::RuntimePrediction::Tsafrir
                     : runtime == "ml"    ? batch::RuntimePrediction::Ml
                                          : batch::RuntimePrediction::Requested,
                     ml);
  const std::string policy = p.get_string("policy");
  config_.backfill = policy == "fcfs" ? batch::Backfill::None
                     : policy == "easy" ? batch::Backfill::Easy
                                        : batch::Backfill::Conservative;
  config_.bf_window = p.get_double("bf_window");
  config_.bf_resolution = p.get_double("bf_resolution");
  config_.bf_max_job_test = p.get_int("bf_max_job_test");
  config_.bf_continue = p.get_bool("bf_continue");
  bf_interval_ = p.get_double("bf_interval");
  predict_waits_ = p.get_bool("predict_waits");
  train_fraction_ = p.get_double("ml_train_fraction");
  ridge_lambda_ = p.get_double("ridge_lambda");
  trees_.rounds = static_cast<int>(p.get_int("xgb_rounds"));
  trees_.max_depth = static_cast<int>(p.get_int("xgb_max_depth"));
  trees_.eta = p.get_double("xgb_eta");
  if (predict_waits_)
    features_.resize(workload_.jobs.size());

  pieces_.resize(workload_.jobs.size());
  execs_.resize(workload_.jobs.size());
  scheduler_.emplace(*cluster_, config_, *priority_, *predictor_, [this](batch::Job& j) {
    const auto index = static_cast<std::size_t>(&j - workload_.jobs.data());
    pieces_[index] = cluster_->allocate(j.cores);
    // The job runs as an execution on its first node, one core, for its run time.
    auto* host = nodes_[static_cast<std::size_t>(pieces_[index].front().first)];
    execs_[index] = sg4::this_actor::exec_init(j.runtime * host->get_speed());
    execs_[index]->set_host(host);
    execs_[index]->start();
    ending_.emplace(j.end, index);
    history_.started(j.user, j.start - j.submit);
    busy_cores_ += j.cores;
    peak_busy_cores_ = std::max(peak_busy_cores_, busy_cores_);
  });
  ctx.create_actor("batch-scheduler", nodes_.front(), [this] { run(); });
}

void BatchModel::run()
{
  auto& jobs = workload_.jobs;
  std::size_t next = 0;
  double last_backfill = -std::numeric_limits<double>::infinity();
  bool changed = false; // since the last backfill pass
  const double inf = std::numeric_limits<double>::infinity();
  while (next < jobs.size() || !ending_.empty()) {
    const double t_submit = next < jobs.size() ? jobs[next].submit : inf;
    const double t_end = ending_.empty() ? inf : ending_.top().first;
    const double t_tick = bf_interval_ > 0 && changed && !scheduler_->idle() ? last_backfill + bf_interval_ : inf;
    const double now = std::min({t_submit, t_end, t_tick});
    if (now > sg4::Engine::get_clock())
      sg4::this_actor::sleep_until(now);
    while (!ending_.empty() && ending_.top().first <= now) {
      const std::size_t i = ending_.top().second;
      ending_.pop();
      execs_[i]->wait();
      execs_[i] = nullptr;
      cluster_->release(pieces_[i]);
      busy_cores_ -= jobs[i].cores;
      scheduler_->finish(jobs[i], now);
      history_.finished(jobs[i].user, jobs[i].runtime);
      changed = true;
    }
    while (next < jobs.size() && jobs[next].submit <= now) {
      scheduler_->submit(jobs[next]);
      if (predict_waits_) {
        const auto& j = jobs[next];
        features_[next] = batch::wait_features(static_cast<double>(j.cores), j.requested, j.submit,
                                               scheduler_->state_at_submit(j, now), history_, j.user,
                                               header_.unix_start_time, header_.timezone);
      }
      next++;
      changed = true;
    }
    scheduler_->main_pass(now);
    if (changed && (bf_interval_ <= 0 || now >= last_backfill + bf_interval_)) {
      scheduler_->backfill_pass(now);
      last_backfill = now;
      changed = scheduler_->cut_short(); // untested jobs left: the next pass is not idle
    }
  }
  if (!scheduler_->idle())
    throw simcore::InternalError("batch: jobs left in the queue with nothing running");
}

void BatchModel::report(const simcore::SimContext&, simcore::Results& results)
{
  const auto& jobs = workload_.jobs;
  std::vector<double> waits, bsld, pp_bsld, abs_err;
  double first_submit = jobs.empty() ? 0 : jobs.front().submit, last_end = first_submit, work = 0;
  std::int64_t killed = 0, predictions = 0, late = 0;
  for (const auto& j : jobs) {
    const double wait = j.start - j.submit;
    waits.push_back(wait);
    // Bounded slowdown (tau = 10 s) and its per-processor form (tau = 60 s, the response
    // time over cores x max(run time, tau)), both at least 1.
    bsld.push_back(std::max(1.0, (wait + j.runtime) / std::max(j.runtime, 10.0)));
    pp_bsld.push_back(std::max(1.0, (wait + j.runtime) / (static_cast<double>(j.cores) * std::max(j.runtime, 60.0))));
    last_end = std::max(last_end, j.end);
    work += static_cast<double>(j.cores) * j.runtime;
    killed += j.killed;
    if (!std::isnan(j.scheduler_prediction)) {
      predictions++;
      abs_err.push_back(std::abs(j.scheduler_prediction - j.start));
    }
    late += !std::isnan(j.reservation) && j.start > j.reservation;
  }
  const double makespan = last_end - first_submit;
  results.set_metric("jobs", static_cast<std::int64_t>(jobs.size()));
  results.set_metric("skipped_too_large", workload_.too_large);
  results.set_metric("skipped_unknown", workload_.unknown);
  results.set_metric("dropped_cancelled_or_failed", dropped_status_);
  results.set_metric("lines_with_extra_fields", extra_field_lines_);
  results.set_metric("killed_at_requested_time", killed);
  results.set_metric("cores", cluster_->total_cores());
  if (header_.max_procs > 0) // SWF's -1: the trace does not say
    results.set_metric("trace_max_procs", header_.max_procs);
  results.set_metric("makespan", makespan, "s");
  results.set_metric("utilisation", makespan > 0 ? work / (static_cast<double>(cluster_->total_cores()) * makespan) : 0.0);
  results.set_metric("peak_busy_cores", peak_busy_cores_);
  results.set_metric("wait_mean", simcore::stats_of(waits).mean(), "s");
  results.set_metric("wait_median", simcore::quantile(waits, 0.5), "s");
  results.set_metric("wait_p95", simcore::quantile(waits, 0.95), "s");
  results.set_metric("bounded_slowdown_mean", simcore::stats_of(bsld).mean());
  results.set_metric("per_processor_bounded_slowdown_mean", simcore::stats_of(pp_bsld).mean());
  results.set_metric("backfilled_jobs", scheduler_->started_by_backfill());
  results.set_metric("runtime_model_refits", predictor_->refits());
  {
    std::vector<double> runtime_err;
    for (const auto& j : jobs)
      runtime_err.push_back(std::abs(j.first_prediction - j.runtime));
    results.set_metric("runtime_prediction_mae", simcore::stats_of(runtime_err).mean(), "s");
  }
  results.set_metric("started_after_reservation", late);
  results.set_metric("scheduler_predictions", predictions);
  results.set_metric("scheduler_prediction_mae", simcore::stats_of(abs_err).mean(), "s");

  // Wait-time predictors: trained on the jobs that finished before the evaluation period
  // (the last 1 - ml_train_fraction of submissions), evaluated on the jobs submitted in it.
  std::vector<double> predicted_trees(jobs.size(), batch::kNone), predicted_ridge(jobs.size(), batch::kNone);
  std::vector<std::int64_t> ml_set(jobs.size(), 0);
  if (predict_waits_ && !jobs.empty()) {
    const double split = jobs[static_cast<std::size_t>(train_fraction_ * static_cast<double>(jobs.size() - 1))].submit;
    batch::Dataset train;
    std::vector<batch::WaitFeatures> eval_x;
    std::vector<std::size_t> eval_jobs;
    for (std::size_t i = 0; i < jobs.size(); i++) {
      if (jobs[i].end < split) {
        train.x.push_back(features_[i]);
        train.y.push_back(jobs[i].start - jobs[i].submit);
        ml_set[i] = 1;
      } else if (jobs[i].submit >= split) {
        eval_x.push_back(features_[i]);
        eval_jobs.push_back(i);
        ml_set[i] = 2;
      }
    }
    const auto trees = batch::boosted_trees_waits(train, eval_x, trees_);
    const auto ridge = batch::ridge_waits(train, eval_x, ridge_lambda_);
    std::vector<double> actual, actual_s, sched_s, trees_s, ridge_s;
    for (std::size_t k = 0; k < eval_jobs.size(); k++) {
      const auto& j = jobs[eval_jobs[k]];
      predicted_trees[eval_jobs[k]] = j.submit + trees[k];
      predicted_ridge[eval_jobs[k]] = j.submit + ridge[k];
      actual.push_back(j.start - j.submit);
      if (!std::isnan(j.scheduler_prediction)) { // the jobs the scheduler predicted
        actual_s.push_back(j.start - j.submit);
        sched_s.push_back(j.scheduler_prediction - j.submit);
        trees_s.push_back(trees[k]);
        ridge_s.push_back(ridge[k]);
      }
    }
    results.set_metric("ml_split_time", split, "s");
    results.set_metric("ml_training_jobs", static_cast<std::int64_t>(train.x.size()));
    results.set_metric("ml_evaluation_jobs", static_cast<std::int64_t>(eval_jobs.size()));
    const auto put = [&](const std::string& name, const batch::PredictionErrors& e) {
      results.set_metric(name + "_jobs", e.jobs);
      results.set_metric(name + "_mae", e.mae, "s");
      results.set_metric(name + "_median_abs_error", e.median_abs_error, "s");
      results.set_metric(name + "_within_1min", e.within_1min);
      results.set_metric(name + "_within_10pct", e.within_10pct);
    };
    put("xgboost", batch::prediction_errors(trees, actual));
    put("ridge", batch::prediction_errors(ridge, actual));
    // On the jobs the scheduler predicted: its error against the ML models' on the same jobs.
    const auto sched = batch::prediction_errors(sched_s, actual_s);
    const auto trees_on = batch::prediction_errors(trees_s, actual_s);
    const auto ridge_on = batch::prediction_errors(ridge_s, actual_s);
    put("scheduler", sched);
    results.set_metric("xgboost_mae_on_scheduler_jobs", trees_on.mae, "s");
    results.set_metric("ridge_mae_on_scheduler_jobs", ridge_on.mae, "s");
    results.set_metric("scheduler_to_xgboost_error_ratio", trees_on.mae > 0 ? sched.mae / trees_on.mae : 0.0);
    results.set_metric("scheduler_to_ridge_error_ratio", ridge_on.mae > 0 ? sched.mae / ridge_on.mae : 0.0);
  }

  results.add_table("jobs", "per job: trace values, the scheduler's first predicted start (NaN: never tested by "
                            "backfill before it started), its earliest reservation, start, end")
      .add_column("id", "", jobs, [](const batch::Job& j) { return j.id; })
      .add_column("user", "", jobs, [](const batch::Job& j) { return j.user; })
      .add_column("cores", "", jobs, [](const batch::Job& j) { return j.cores; })
      .add_column("submit", "s", jobs, [](const batch::Job& j) { return j.submit; })
      .add_column("requested", "s", jobs, [](const batch::Job& j) { return j.requested; })
      .add_column("runtime", "s", jobs, [](const batch::Job& j) { return j.runtime; })
      .add_column("predicted_start_scheduler", "s", jobs, [](const batch::Job& j) { return j.scheduler_prediction; })
      .add_column("predicted_start_xgboost", "s", predicted_trees)
      .add_column("predicted_start_ridge", "s", predicted_ridge)
      .add_column("ml_set", "", ml_set)
      .add_column("reservation", "s", jobs, [](const batch::Job& j) { return j.reservation; })
      .add_column("start", "s", jobs, [](const batch::Job& j) { return j.start; })
      .add_column("end", "s", jobs, [](const batch::Job& j) { return j.end; })
      .add_column("killed", "", jobs, [](const batch::Job& j) { return static_cast<std::int64_t>(j.killed); })
      .add_column("backfilled", "", jobs, [](const batch::Job& j) { return static_cast<std::int64_t>(j.backfilled); });
}

simcore::ModelInfo make_info()
{
  return {"batch",
          "Slurm-like batch scheduler fed by SWF traces: FCFS, EASY or conservative backfilling, multifactor priority",
          {
              ParamSpec::file("workload", "Standard Workload Format (2.2) trace"),
              ParamSpec::integer("first_jobs", 0, "keep the first N jobs (0: all)").at_least(0),
              ParamSpec::quantity("window_start", ParamType::Time, "0", "keep jobs submitted from this trace time")
                  .at_least(0),
              ParamSpec::quantity("window_end", ParamType::Time, "0", "keep jobs submitted before this trace time (0: no end)")
                  .at_least(0),
              ParamSpec::real("load_factor", 1, "divides inter-arrival times (> 1: more load)").within(1e-3, 1e3),
              ParamSpec::boolean("keep_cancelled", true, "keep cancelled (5) and failed (0) jobs"),
              ParamSpec::integer("repeat", 1, "the trace repeated, shifted by its span each time").within(1, 1e6),
              ParamSpec::string("hosts", ".*", "regular expression: the nodes"),
              ParamSpec::integer("nodes", 0, "nodes (0: every matching host)").at_least(0),
              ParamSpec::integer("cores_per_node", 0, "cores per node (0: the host's)").within(0, 1 << 20),
              ParamSpec::choice("allocation", {"cores", "nodes"}, "cores", "jobs share nodes, or get whole nodes"),
              ParamSpec::choice("policy", {"fcfs", "easy", "conservative"}, "easy", "backfilling"),
              ParamSpec::choice("priority", {"fcfs", "multifactor"}, "fcfs", "queue order"),
              ParamSpec::real("priority_weight_age", 0, "PriorityWeightAge").at_least(0),
              ParamSpec::real("priority_weight_job_size", 0, "PriorityWeightJobSize").at_least(0),
              ParamSpec::real("priority_weight_fairshare", 0, "PriorityWeightFairshare").at_least(0),
              ParamSpec::real("priority_weight_partition", 0, "PriorityWeightPartition").at_least(0),
              ParamSpec::real("priority_weight_qos", 0, "PriorityWeightQOS").at_least(0),
              ParamSpec::quantity("priority_max_age", ParamType::Time, "7d", "PriorityMaxAge").at_least(0),
              ParamSpec::quantity("priority_decay_half_life", ParamType::Time, "7d", "PriorityDecayHalfLife (0: none)")
                  .at_least(0),
              ParamSpec::boolean("priority_favor_small", false, "PriorityFavorSmall"),
              ParamSpec::integer_list("partition_priorities", "", "priority of partitions 1, 2, ... (SWF field 16)")
                  .at_least(0),
              ParamSpec::integer_list("qos_priorities", "", "priority of QOS 1, 2, ... (SWF queue, field 15)").at_least(0),
              ParamSpec::quantity("bf_interval", ParamType::Time, "30s", "between backfill passes (0: at every event)")
                  .at_least(0),
              ParamSpec::quantity("bf_window", ParamType::Time, "1d", "how far backfilling plans").at_least(1),
              ParamSpec::quantity("bf_resolution", ParamType::Time, "60s", "time resolution of the plan (0: exact)")
                  .at_least(0),
              ParamSpec::integer("bf_max_job_test", 500, "jobs tested per backfill pass").at_least(1),
              ParamSpec::boolean("bf_continue", false, "a pass cut by bf_max_job_test resumes where it stopped"),
              ParamSpec::boolean("predict_waits", true, "train and evaluate the wait-time predictors"),
              ParamSpec::real("ml_train_fraction", 0.5, "submissions before the evaluation period").within(0.05, 0.95),
              ParamSpec::integer("xgb_rounds", 200, "boosting rounds").within(1, 10000),
              ParamSpec::integer("xgb_max_depth", 6, "tree depth").within(1, 20),
              ParamSpec::real("xgb_eta", 0.1, "learning rate").within(1e-4, 1),
              ParamSpec::real("ridge_lambda", 1, "ridge penalty on standardised features").at_least(0),
              ParamSpec::choice("runtime_prediction", {"requested", "tsafrir", "ml"}, "requested",
                                "run times backfilling plans with: requested, the user's last two, or "
                                "gradient-boosted trees refitted as jobs finish (all with EASY++)"),
              ParamSpec::integer("ml_runtime_refit_every", 200, "runtime_prediction=ml: finished jobs between refits")
                  .within(1, 1e9),
              ParamSpec::integer("ml_runtime_window", 5000, "runtime_prediction=ml: recent finished jobs it learns from")
                  .within(10, 1e9),
          },
          [] { return std::make_unique<BatchModel>(); }};
}

} // namespace

SIMCORE_REGISTER_MODEL(make_info())
