// The shipped shapes file, its agreement with the project's models.json, and the JSON reader.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "json.h"
#include "shapes.h"

namespace fusedmoe::tools {
namespace {

std::string read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(Shapes, ShippedFileLoads) {
  ShapesFile file;
  const Status st = load_shapes(FUSEDMOE_SHAPES_FILE, &file);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(file.shapes.size(), 5u);
  const ShapeSpec* ds = file.find("deepseek_v3_tp8");
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->shape.num_experts, 256);
  EXPECT_EQ(ds->shape.hidden, 7168);
  EXPECT_EQ(ds->shape.inter, 256);
  EXPECT_EQ(ds->shape.topk, 8);
  EXPECT_EQ(ds->routing.config.n_group, 8);
  EXPECT_EQ(ds->routing.config.topk_group, 4);
  EXPECT_FLOAT_EQ(ds->routing.config.routed_scaling_factor, 2.5f);
  EXPECT_TRUE(ds->routing.use_correction_bias);
  const ShapeSpec* scout = file.find("llama4_scout_tp8");
  ASSERT_NE(scout, nullptr);
  EXPECT_TRUE(scout->routing.weight_on_input);
  EXPECT_TRUE(file.find("mixtral_8x7b_tp1")->routing.config.renormalize);
  EXPECT_FALSE(file.find("qwen2_57b_a14b_tp4")->routing.config.renormalize);
  EXPECT_EQ(file.batch_sizes.front(), 1);
  EXPECT_EQ(file.batch_sizes.back(), 8192);
}

TEST(Shapes, SameContentAsProjectModels) {
  const std::string shared = read(FUSEDMOE_SHARED_MODELS_FILE);
  if (shared.empty()) GTEST_SKIP() << "no ../shared/models.json beside this checkout";
  EXPECT_EQ(read(FUSEDMOE_SHAPES_FILE), shared) << "shapes/models.json must be a copy of ../shared/models.json";
}

TEST(Json, ParsesValuesAndNamesErrors) {
  Json j;
  ASSERT_TRUE(parse_json(R"({"a": [1, -2.5e3, true, null], "b": {"c": "x\"y"}})", &j).ok());
  EXPECT_EQ(j.get("a")->array[1].number, -2500.0);
  EXPECT_TRUE(j.get("a")->array[2].boolean);
  EXPECT_EQ(j.get("b")->get("c")->string, "x\"y");
  Status st = parse_json("{\"a\": [1, 2}", &j);
  EXPECT_EQ(st.message(), "json line 1 column 12: expected ',' or ']', got '}'");
  st = parse_json("{\n\"a\" 1}", &j);
  EXPECT_EQ(st.message(), "json line 2 column 5: expected ':', got '1'");
  st = parse_json("", &j);
  EXPECT_EQ(st.message(), "json line 1 column 1: expected a value, got end of input");
}

TEST(Shapes, RoutingNames) {
  RoutingSetup r;
  EXPECT_TRUE(routing_from_name("skewed", 0, 0, 1.0f, &r).ok());
  EXPECT_FALSE(r.from_logits);
  EXPECT_EQ(synthetic_routing_mode(r), ref::RoutingMode::kSkewed);
  EXPECT_TRUE(routing_from_name("balanced", 0, 0, 1.0f, &r).ok());
  EXPECT_EQ(synthetic_routing_mode(r), ref::RoutingMode::kBalanced);
  EXPECT_TRUE(routing_from_name("softmax_topk", 0, 0, 1.0f, &r).ok());
  EXPECT_EQ(synthetic_routing_mode(r), ref::RoutingMode::kRouter);
  const Status st = routing_from_name("topk", 0, 0, 1.0f, &r);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("got 'topk'"), std::string::npos);
}

}  // namespace
}  // namespace fusedmoe::tools
