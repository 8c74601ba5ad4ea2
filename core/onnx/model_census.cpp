#include "onnx/model_census.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <limits>

namespace loom::onnxio {
namespace {

using google::protobuf::internal::WireFormatLite;

// Field numbers of onnx.proto (ONNX 1.12 onward; they never change).
enum class Message { kModel, kGraph, kNode, kAttribute, kFunction, kTrainingInfo };
constexpr int kModelGraph = 7, kModelTrainingInfo = 20, kModelFunctions = 25;
constexpr int kTrainingInitialization = 1, kTrainingAlgorithm = 2;
constexpr int kGraphNode = 1, kGraphInput = 11, kGraphOutput = 12, kGraphValueInfo = 13;
constexpr int kNodeInput = 1, kNodeOutput = 2, kNodeAttribute = 5;
constexpr int kAttributeGraph = 6, kAttributeGraphs = 11;
constexpr int kFunctionInput = 4, kFunctionOutput = 5, kFunctionNode = 7, kFunctionValueInfo = 12;

class CensusWalk {
 public:
  CensusWalk(google::protobuf::io::ZeroCopyInputStream& in, int64_t max_nodes, int64_t max_value_names,
             int max_nesting)
      : stream_(&in), max_nodes_(max_nodes), max_value_names_(max_value_names), max_nesting_(max_nesting) {
    stream_.SetTotalBytesLimit(std::numeric_limits<int>::max());
  }

  ModelCensus run() {
    if (!walk(Message::kModel, 0) && !census_.stopped) census_.malformed = true;
    return census_;
  }

 private:
  // The message `field` of a `kind` message holds, if the walk descends into it.
  static bool child(Message kind, int field, Message* out) {
    switch (kind) {
      case Message::kModel:
        if (field == kModelGraph) *out = Message::kGraph;
        else if (field == kModelFunctions) *out = Message::kFunction;
        else if (field == kModelTrainingInfo) *out = Message::kTrainingInfo;
        else return false;
        return true;
      case Message::kTrainingInfo:
        if (field != kTrainingInitialization && field != kTrainingAlgorithm) return false;
        *out = Message::kGraph;
        return true;
      case Message::kGraph:
        if (field != kGraphNode) return false;
        *out = Message::kNode;
        return true;
      case Message::kNode:
        if (field != kNodeAttribute) return false;
        *out = Message::kAttribute;
        return true;
      case Message::kAttribute:
        if (field != kAttributeGraph && field != kAttributeGraphs) return false;
        *out = Message::kGraph;
        return true;
      case Message::kFunction:
        if (field != kFunctionNode) return false;
        *out = Message::kNode;
        return true;
    }
    return false;
  }

  static bool names_a_value(Message kind, int field) {
    switch (kind) {
      case Message::kGraph: return field == kGraphInput || field == kGraphOutput || field == kGraphValueInfo;
      case Message::kNode: return field == kNodeInput || field == kNodeOutput;
      case Message::kFunction:
        return field == kFunctionInput || field == kFunctionOutput || field == kFunctionValueInfo;
      default: return false;
    }
  }

  // False when the walk stops (a bound passed, or malformed bytes).
  bool count(Message kind, int field) {
    if (names_a_value(kind, field) && ++census_.value_names > max_value_names_ && max_value_names_ > 0)
      return stop();
    return true;
  }
  bool stop() {
    census_.stopped = true;
    return false;
  }

  bool walk(Message kind, int depth) {
    if (kind == Message::kNode && ++census_.nodes > max_nodes_ && max_nodes_ > 0) return stop();
    while (true) {
      const uint32_t tag = stream_.ReadTag();
      if (tag == 0) return stream_.ConsumedEntireMessage();
      const int field = WireFormatLite::GetTagFieldNumber(tag);
      const bool delimited = WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
      if (delimited && !count(kind, field)) return false;
      Message inner;
      if (!delimited || !child(kind, field, &inner)) {
        if (!WireFormatLite::SkipField(&stream_, tag)) return false;
        continue;
      }
      if (depth + 1 > max_nesting_) return false;
      uint32_t length = 0;
      if (!stream_.ReadVarint32(&length) || length > static_cast<uint32_t>(std::numeric_limits<int>::max()))
        return false;
      const auto limit = stream_.PushLimit(static_cast<int>(length));
      if (!walk(inner, depth + 1)) return false;
      if (stream_.BytesUntilLimit() != 0) return false;
      stream_.PopLimit(limit);
    }
  }

  google::protobuf::io::CodedInputStream stream_;
  const int64_t max_nodes_, max_value_names_;
  const int max_nesting_;
  ModelCensus census_;
};

}  // namespace

ModelCensus take_model_census(google::protobuf::io::ZeroCopyInputStream& in, int64_t max_nodes,
                              int64_t max_value_names, int max_nesting) {
  return CensusWalk(in, max_nodes, max_value_names, max_nesting).run();
}

}  // namespace loom::onnxio
