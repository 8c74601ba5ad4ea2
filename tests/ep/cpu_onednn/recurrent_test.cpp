// LSTM and GRU on cpu_onednn vs the reference EP: every direction, with and
// without biases and initial states, each output alone and together, GRU
// with linear_before_reset either way; and what oneDNN has no form for
// stays on the reference EP, naming why.
#include <functional>

#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

struct RecurrentCase {
  std::string op;  // LSTM or GRU
  std::string direction = "forward";
  int64_t seq = 5, batch = 3, input = 7, hidden = 6;
  bool bias = true, initial_state = false;
  int64_t linear_before_reset = 0;
  // Which of Y, Y_h, Y_c the graph outputs (Y_c: LSTM only).
  bool y = true, y_h = true, y_c = true;
};

std::string recurrent_model(const RecurrentCase& c) {
  const int64_t dirs = c.direction == "bidirectional" ? 2 : 1, gates = c.op == "LSTM" ? 4 : 3;
  testing::ModelBuilder m(14);
  m.input("x", kFloat, {c.seq, c.batch, c.input});
  random_weights(m, "w", {dirs, gates * c.hidden, c.input}, 1, c.input);
  random_weights(m, "r", {dirs, gates * c.hidden, c.hidden}, 2, c.hidden);
  std::vector<std::string> inputs = {"x", "w", "r", c.bias ? "b" : ""};
  if (c.bias) random_weights(m, "b", {dirs, 2 * gates * c.hidden}, 3);
  if (c.initial_state) {
    m.input("h0", kFloat, {dirs, c.batch, c.hidden});
    inputs.insert(inputs.end(), {"", "h0"});
    if (c.op == "LSTM") {
      m.input("c0", kFloat, {dirs, c.batch, c.hidden});
      inputs.push_back("c0");
    }
  }
  std::vector<std::string> outputs = {c.y ? "y" : "", c.y_h ? "y_h" : ""};
  if (c.op == "LSTM") outputs.push_back(c.y_c ? "y_c" : "");
  while (!outputs.empty() && outputs.back().empty()) outputs.pop_back();
  auto& n = m.node(c.op, inputs, outputs);
  testing::add_int_attr(n, "hidden_size", c.hidden);
  testing::add_string_attr(n, "direction", c.direction);
  if (c.op == "GRU") testing::add_int_attr(n, "linear_before_reset", c.linear_before_reset);
  for (const std::string& o : outputs)
    if (!o.empty()) m.output(o, kFloat, {});
  return m.bytes();
}

std::map<std::string, Tensor> recurrent_inputs(const RecurrentCase& c) {
  const int64_t dirs = c.direction == "bidirectional" ? 2 : 1;
  std::map<std::string, Tensor> in = {{"x", random_tensor({c.seq, c.batch, c.input}, 11)}};
  if (c.initial_state) {
    in["h0"] = random_tensor({dirs, c.batch, c.hidden}, 12);
    if (c.op == "LSTM") in["c0"] = random_tensor({dirs, c.batch, c.hidden}, 13);
  }
  return in;
}

std::string describe(const RecurrentCase& c) {
  return c.op + " " + c.direction + (c.bias ? "" : " no bias") + (c.initial_state ? " initial state" : "") +
         (c.linear_before_reset ? " linear_before_reset" : "") + " outputs" + (c.y ? " Y" : "") + (c.y_h ? " Y_h" : "") +
         (c.op == "LSTM" && c.y_c ? " Y_c" : "");
}

TEST(OnednnRecurrent, MatchesTheReference) {
  std::vector<RecurrentCase> cases;
  for (const std::string op : {"LSTM", "GRU"})
    for (const std::string direction : {"forward", "reverse", "bidirectional"}) {
      RecurrentCase c;
      c.op = op;
      c.direction = direction;
      cases.push_back(c);
      c.initial_state = true;
      cases.push_back(c);
    }
  RecurrentCase c;
  c.op = "LSTM";
  c.bias = false;
  c.y = false;  // Y_h and Y_c alone
  cases.push_back(c);
  c = RecurrentCase{};
  c.op = "LSTM";
  c.y = c.y_h = false;  // Y_c alone
  c.initial_state = true;
  cases.push_back(c);
  c = RecurrentCase{};
  c.op = "LSTM";
  c.direction = "bidirectional";
  c.y_h = c.y_c = false;  // Y alone
  c.batch = 1;
  cases.push_back(c);
  for (const std::string direction : {"forward", "bidirectional"}) {
    c = RecurrentCase{};
    c.op = "GRU";
    c.direction = direction;
    c.linear_before_reset = 1;
    c.initial_state = true;
    cases.push_back(c);
  }
  c = RecurrentCase{};
  c.op = "GRU";
  c.seq = 1;
  c.hidden = 16;
  c.input = 40;
  c.y = false;
  cases.push_back(c);
  for (const RecurrentCase& k : cases) {
    ProfiledParts parts;
    expect_matches_reference(recurrent_model(k), recurrent_inputs(k), {1e-5, 1e-5}, describe(k), onednn_env(),
                             &parts);
    EXPECT_EQ(parts.count(k.op == "LSTM" ? "lstm" : "gru"), 1u) << describe(k);
  }
}

TEST(OnednnRecurrent, WhatOneDnnHasNoFormForStaysOnTheReference) {
  struct Refused {
    std::string why;
    std::function<void(::onnx::NodeProto&)> change;
  };
  const std::vector<Refused> refused = {
      {"clip", [](::onnx::NodeProto& n) { testing::add_float_attr(n, "clip", 0.5f); }},
      {"explicit activations",
       [](::onnx::NodeProto& n) { testing::add_strings_attr(n, "activations", {"Sigmoid", "Tanh", "Tanh"}); }},
      {"batch-first", [](::onnx::NodeProto& n) { testing::add_int_attr(n, "layout", 1); }},
      {"coupled input-forget", [](::onnx::NodeProto& n) { testing::add_int_attr(n, "input_forget", 1); }},
  };
  for (const Refused& r : refused) {
    testing::ModelBuilder m(14);
    const bool batch_first = r.why == "batch-first";
    m.input("x", kFloat, batch_first ? std::vector<int64_t>{3, 5, 4} : std::vector<int64_t>{5, 3, 4});
    random_weights(m, "w", {1, 8, 4}, 1, 4);
    random_weights(m, "r", {1, 8, 2}, 2, 2);
    auto& n = m.node("LSTM", {"x", "w", "r"}, {"y"});
    testing::add_int_attr(n, "hidden_size", 2);
    r.change(n);
    m.output("y", kFloat, {});
    Config config;
    config.providers = {"cpu_onednn", "reference"};
    auto s = make_session(testing::make_env(config), m.bytes());
    ASSERT_TRUE(s) << r.why;
    for (const auto& node : s->placement().nodes) EXPECT_EQ(node.provider, "reference") << r.why;
    // Still right: the reference EP runs it.
    auto reference = make_session(reference_env(), m.bytes());
    const std::map<std::string, Tensor> in = {
        {"x", random_tensor(batch_first ? std::vector<int64_t>{3, 5, 4} : std::vector<int64_t>{5, 3, 4}, 5)}};
    auto got = s->run(in);
    auto want = reference->run(in);
    ASSERT_TRUE(got.has_value() && want.has_value()) << r.why;
    expect_close((*want)[0], (*got)[0], {}, r.why);
  }
}

}  // namespace
}  // namespace loom::ep_testing
