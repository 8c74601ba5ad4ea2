// The CUDA EP's kernels and the rules that decide which nodes it claims.
// Each op family registers its kernels here (kernels/*_kernels.cpp), with
// the element types it serves and, where the kernel table cannot say it, a
// check of the node's attributes and shapes; placement.cpp asks why_not()
// for every node before claiming it.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ep_context.h"
#include "loom/sdk.h"

namespace loom::cuda {

// Why the kernel cannot serve `node` (an attribute value, a rank, a shape
// it does not handle); empty when it can.
using SupportCheck = std::string (*)(const sdk::Node& node);

class KernelTable {
 public:
  explicit KernelTable(const EpContext& context) : context_(context) {}
  KernelTable(const KernelTable&) = delete;
  KernelTable& operator=(const KernelTable&) = delete;

  const EpContext& context() const { return context_; }
  const sdk::KernelRegistry& registry() const { return registry_; }

  // Class kernel K, built as K(const sdk::Node&, const EpContext&), for
  // opsets [since, end] of domain.op. `types` are its type constraints; the
  // first is also checked at claim time against the element type of input
  // `typed_input` (the input bound to that type parameter). `check` adds
  // node-specific conditions.
  template <class K>
  KernelTable& add(const std::string& domain, const std::string& op, int since, int end,
                   std::vector<sdk::TypeConstraintSpec> types, SupportCheck check = nullptr, int typed_input = 0) {
    registry_.add_class_with<K, EpContext>(domain, op, since, end, &context_, types);
    Rule r;
    r.domain = domain;
    r.op = op;
    r.since = since;
    r.end = end;
    if (!types.empty()) r.dtypes = types.front().dtypes;
    r.typed_input = typed_input;
    r.check = check;
    rules_.push_back(std::move(r));
    return *this;
  }
  // Modifiers of the kernel added last (see LOOM_KernelDef).
  KernelTable& input_on_host(int input) {
    registry_.input_on_host(input);
    rules_.back().host_inputs.push_back(input);
    return *this;
  }
  KernelTable& output_on_host(int output) {
    registry_.output_on_host(output);
    rules_.back().host_outputs.push_back(output);
    return *this;
  }
  KernelTable& output_may_reuse_input(int output, int input) {
    registry_.output_may_reuse_input(output, input);
    return *this;
  }

  // Why no kernel here serves `node`; empty when one does.
  std::string why_not(const sdk::Node& node) const;
  // Inputs of `node` its kernel reads on the host (empty when none or when
  // no kernel serves it).
  std::vector<int> host_inputs(const sdk::Node& node) const;
  // Every op this table serves, as "domain.op" (for messages and tests).
  std::vector<std::string> ops() const;

 private:
  struct Rule {
    std::string domain, op;
    int since = 1, end = 1;
    std::vector<int32_t> dtypes;
    int typed_input = 0;
    SupportCheck check = nullptr;
    std::vector<int> host_inputs, host_outputs;
  };
  const Rule* find(const sdk::Node& node, std::string* why) const;

  const EpContext& context_;
  sdk::KernelRegistry registry_;
  std::vector<Rule> rules_;
};

// Every family's kernels (kernels/*_kernels.cpp), registered into `table`.
void register_all_kernels(KernelTable& table);

}  // namespace loom::cuda
