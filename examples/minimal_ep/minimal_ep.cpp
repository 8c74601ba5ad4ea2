// minimal_ep: a complete third-party execution provider for Loom, built
// against the installed SDK alone (find_package(Loom), target Loom::sdk).
//
// It is a compiling EP: it claims every float Add whose result feeds only a
// Relu, together with that Relu, as one fused set, and runs the pair as
// y = max(a + b, 0) in one pass over memory. Everything else is left to the
// providers after it in the priority list. Drop libminimal_ep.so into a
// plugin directory and list "minimal_ep" first in the config's providers.
#include <loom/sdk.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace loom::sdk;

// Add(a, b) -> Relu, both inputs of one (known) shape: what this EP fuses.
struct AddRelu {
  uint64_t add = 0, relu = 0;
};

std::vector<AddRelu> find_add_relu(const Graph& g) {
  // Who reads each value, and which values leave the graph.
  std::map<std::string, std::vector<size_t>> readers;
  for (size_t i = 0; i < g.node_count(); ++i) {
    Node n = g.node(i);
    for (size_t k = 0; k < n.input_count(); ++k) readers[std::string(n.input_name(k))].push_back(i);
  }
  std::vector<std::string> graph_outputs;
  for (size_t i = 0; i < g.output_count(); ++i) graph_outputs.emplace_back(g.output_name(i));

  std::vector<AddRelu> found;
  for (size_t i = 0; i < g.node_count(); ++i) {
    Node add = g.node(i);
    if (add.op_type() != "Add" || !add.domain().empty() || add.input_dtype(0) != LOOM_DTYPE_FLOAT) continue;
    auto a = add.input_shape(0), b = add.input_shape(1);
    if (!a || !b || *a != *b) continue;  // no broadcasting in this example
    const std::string sum(add.output_name(0));
    const auto& r = readers[sum];
    if (r.size() != 1 || std::count(graph_outputs.begin(), graph_outputs.end(), sum) != 0) continue;
    Node relu = g.node(r[0]);
    if (relu.op_type() != "Relu" || !relu.domain().empty()) continue;
    found.push_back({add.id(), relu.id()});
  }
  return found;
}

// One compiled Add+Relu pair. Its inputs are the subgraph's inputs (a, b;
// one value twice when a == b), its output the Relu's.
class AddReluPartition : public CompiledPartition {
 public:
  void compute(void*, KernelContext& ctx) override {
    ConstTensor a = ctx.required_input(0);
    ConstTensor b = ctx.input_count() > 1 ? ctx.required_input(1) : a;
    LOOM_SDK_ENFORCE(a.shape() == b.shape(), "minimal_ep: Add+Relu inputs differ in shape");
    Tensor y = ctx.output(0, a.shape(), LOOM_DTYPE_FLOAT);
    const float* pa = a.data<float>();
    const float* pb = b.data<float>();
    float* py = y.mutable_data<float>();
    for (int64_t i = 0; i < a.size(); ++i) py[i] = std::max(pa[i] + pb[i], 0.0f);
  }
};

// EpOf<MinimalEp>: the host sees the claim and compile slots because
// MinimalEp overrides claim() and compile().
class MinimalEp : public EpOf<MinimalEp> {
 public:
  void claim(const Graph& g, ClaimSink& sink) override {
    for (const AddRelu& p : find_add_relu(g)) sink.claim_fused({p.add, p.relu}, "Add+Relu fused by minimal_ep");
  }
  std::unique_ptr<CompiledPartition> compile(const Graph& g) override {
    LOOM_SDK_ENFORCE(g.node_count() == 2, "minimal_ep: expected an Add+Relu pair");
    return std::make_unique<AddReluPartition>();
  }
};

class MinimalFactory : public EpFactory {
 public:
  MinimalFactory() : EpFactory("minimal_ep") {}
  // One device on host memory (the default DeviceSpec).
  std::unique_ptr<Ep> create_ep(size_t, const Options&) override { return std::make_unique<MinimalEp>(); }
};

std::unique_ptr<Plugin> create_plugin() {
  auto p = std::make_unique<Plugin>();
  p->add_factory(std::make_unique<MinimalFactory>());
  return p;
}

}  // namespace

LOOM_SDK_DEFINE_PLUGIN("minimal_ep", "1.0.0", create_plugin)
