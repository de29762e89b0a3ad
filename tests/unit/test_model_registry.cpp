// ModelRegistry: the example model registers itself with its parameter table.
#include <catch2/catch.hpp>

#include "simcore/model.hpp"
#include "simcore/model_registry.hpp"

using simcore::ParamType;

TEST_CASE("ModelRegistry: master_worker is registered with its parameters", "[registry]")
{
  const auto* m = simcore::ModelRegistry::instance().find("master_worker");
  REQUIRE(m != nullptr);
  CHECK(m->name == "master_worker");
  CHECK_THAT(m->summary, Catch::Contains("round robin"));
  REQUIRE(m->factory);
  CHECK(m->factory() != nullptr);

  REQUIRE(m->params.size() == 6);
  const auto& p = m->params;
  CHECK(p[0].name == "tasks");
  CHECK(p[0].type == ParamType::Integer);
  CHECK(p[0].default_value == "100");
  CHECK(p[0].min == 1.0);
  CHECK(p[0].max == 1e8);
  CHECK(p[1].name == "task_flops");
  CHECK(p[1].type == ParamType::Flops);
  CHECK(p[1].default_value == "1Gf");
  CHECK(p[1].unit() == "flop");
  CHECK(p[1].min == 0.0);
  CHECK_FALSE(p[1].max.has_value());
  CHECK(p[2].name == "task_bytes");
  CHECK(p[2].type == ParamType::Size);
  CHECK(p[2].default_value == "1MB");
  CHECK(p[3].name == "workers");
  CHECK(p[3].type == ParamType::Integer);
  CHECK(p[3].default_value == "0");
  CHECK(p[3].min == 0.0);
  CHECK(p[4].name == "master");
  CHECK(p[4].type == ParamType::String);
  CHECK(p[4].default_value.empty());
  CHECK(p[5].name == "flops_jitter");
  CHECK(p[5].type == ParamType::Real);
  CHECK(p[5].default_value == "0");
  CHECK(p[5].min == 0.0);
  CHECK(p[5].max == 0.999);
  for (const auto& s : p) {
    CHECK_FALSE(s.required());
    CHECK_FALSE(s.doc.empty());
  }
}

TEST_CASE("ModelRegistry: lookups and the sorted list", "[registry]")
{
  auto& reg = simcore::ModelRegistry::instance();
  CHECK(reg.find("no_such_model") == nullptr);
  CHECK(reg.find("") == nullptr);
  CHECK(&reg == &simcore::ModelRegistry::instance());
  const auto all = reg.all();
  REQUIRE_FALSE(all.empty());
  bool found = false;
  for (std::size_t i = 0; i < all.size(); i++) {
    found = found || all[i]->name == "master_worker";
    if (i > 0)
      CHECK(all[i - 1]->name < all[i]->name);
  }
  CHECK(found);
}
