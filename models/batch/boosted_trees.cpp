#include "boosted_trees.hpp"

#include <simcore/error.hpp>

#include <xgboost/c_api.h>

#include <cmath>

namespace batch {

namespace {

void check(int rc, const char* what)
{
  if (rc != 0)
    throw simcore::InternalError(std::string("XGBoost ") + what + ": " + XGBGetLastError());
}

DMatrixHandle matrix(const std::vector<float>& x, std::size_t cols)
{
  DMatrixHandle m = nullptr;
  check(XGDMatrixCreateFromMat(x.data(), x.size() / cols, cols, std::nanf(""), &m), "matrix");
  return m;
}

} // namespace

BoostedTrees::~BoostedTrees()
{
  if (booster_)
    XGBoosterFree(booster_);
}

void BoostedTrees::fit(const std::vector<float>& x, std::size_t cols, const std::vector<float>& y)
{
  if (booster_) {
    XGBoosterFree(booster_);
    booster_ = nullptr;
  }
  if (y.empty())
    return;
  DMatrixHandle d = matrix(x, cols);
  check(XGDMatrixSetFloatInfo(d, "label", y.data(), y.size()), "labels");
  BoosterHandle b = nullptr;
  check(XGBoosterCreate(&d, 1, &b), "booster");
  const std::pair<const char*, std::string> params[] = {
      {"objective", s_.objective}, {"tree_method", "exact"}, {"nthread", "1"}, {"seed", "0"},
      {"max_depth", std::to_string(s_.max_depth)}, {"eta", std::to_string(s_.eta)}, {"verbosity", "0"}};
  for (const auto& [k, v] : params)
    check(XGBoosterSetParam(b, k, v.c_str()), "parameter");
  for (int i = 0; i < s_.rounds; i++)
    check(XGBoosterUpdateOneIter(b, i, d), "training");
  XGDMatrixFree(d);
  booster_ = b;
}

std::vector<float> BoostedTrees::predict(const std::vector<float>& x, std::size_t cols) const
{
  if (!booster_ || x.empty())
    return std::vector<float>(x.size() / cols, 0.0f);
  DMatrixHandle d = matrix(x, cols);
  bst_ulong n = 0;
  const float* out = nullptr;
  check(XGBoosterPredict(booster_, d, 0, 0, 0, &n, &out), "prediction");
  std::vector<float> result(out, out + n);
  XGDMatrixFree(d);
  return result;
}

} // namespace batch
