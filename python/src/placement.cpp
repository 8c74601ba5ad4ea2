#include "placement.h"

#include <pybind11/stl.h>

#include "loom/session.h"

namespace loom::python {

namespace py = pybind11;

void register_placement(py::module_& m) {
  using Node = PlacementReport::NodePlacement;
  using Summary = PlacementReport::ProviderSummary;
  py::class_<Node>(m, "NodePlacement")
      .def_readonly("node_name", &Node::node_name)
      .def_readonly("op_type", &Node::op_type)
      .def_readonly("domain", &Node::domain)
      .def_readonly("provider", &Node::provider)
      .def_readonly("reason", &Node::reason)
      .def_readonly("inputs", &Node::inputs)
      .def_readonly("outputs", &Node::outputs)
      .def("__repr__", [](const Node& n) {
        return "NodePlacement(node_name='" + n.node_name + "', op_type='" + n.op_type + "', provider='" + n.provider +
               "')";
      });
  py::class_<Summary>(m, "ProviderPlacement")
      .def_readonly("provider", &Summary::provider)
      .def_readonly("node_count", &Summary::node_count)
      .def_readonly("op_types", &Summary::op_types)
      .def("__repr__", [](const Summary& s) {
        return "ProviderPlacement(provider='" + s.provider + "', node_count=" + std::to_string(s.node_count) + ")";
      });
  py::class_<PlacementReport>(m, "PlacementReport")
      .def_readonly("providers", &PlacementReport::providers)
      .def_readonly("nodes", &PlacementReport::nodes)
      .def("__str__", &PlacementReport::to_string);
}

}  // namespace loom::python
