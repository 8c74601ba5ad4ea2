#include "session_report.h"

#include <iostream>

namespace loom::tools {

int print_session_report(const ParsedArgs& args, const CommandSpec& spec, std::string (*view)(const Session&)) {
  auto model = args.value("model");
  if (!model) return report_usage_error(spec, "--model is required");
  auto env = create_environment(args);
  if (!env) return report_failure(spec.name, env.status().message());
  SessionOptions options;
  if (auto p = args.value("providers")) options.providers = split_list(*p);
  auto session = Session::create(*env, *model, options);
  if (!session) return report_failure(spec.name, session.status().message());
  const std::string text = view(**session);
  std::cout << text;
  if (!text.empty() && text.back() != '\n') std::cout << "\n";
  const int64_t peak = (*session)->planned_peak_bytes();
  std::cout << "planned peak bytes: " << peak;
  // Buffers whose shapes depend on run-time dims are sized when they are made.
  if (peak == 0) std::cout << " (no intermediate shape is known before run time)";
  std::cout << "\n";
  return kExitOk;
}

}  // namespace loom::tools
