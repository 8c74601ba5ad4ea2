#include "kernels/gemm_lt.h"

#include <cublasLt.h>

#include <climits>
#include <cstring>
#include <string>

#include "library_errors.h"

namespace loom::cuda {
namespace {

// The workspace every Lt product may use, from the host's scratch.
constexpr size_t kWorkspaceBytes = size_t{4} << 20;

// Descriptors freed on every path out (a throw included).
struct OpDesc {
  cublasLtMatmulDesc_t d = nullptr;
  ~OpDesc() {
    if (d != nullptr) cublasLtMatmulDescDestroy(d);
  }
};
struct Layout {
  cublasLtMatrixLayout_t d = nullptr;
  ~Layout() {
    if (d != nullptr) cublasLtMatrixLayoutDestroy(d);
  }
};
struct Preference {
  cublasLtMatmulPreference_t d = nullptr;
  ~Preference() {
    if (d != nullptr) cublasLtMatmulPreferenceDestroy(d);
  }
};

template <class Handle, class Attr, class Value>
void set(cublasStatus_t (*fn)(Handle, Attr, const void*, size_t), Handle h, Attr attr, const Value& v,
         const char* what) {
  check_blas(fn(h, attr, &v, sizeof(v)), what);
}

cublasLtEpilogue_t lt_value(LtEpilogue e) {
  switch (e) {
    case LtEpilogue::kBias: return CUBLASLT_EPILOGUE_BIAS;
    case LtEpilogue::kRelu: return CUBLASLT_EPILOGUE_RELU;
    case LtEpilogue::kReluBias: return CUBLASLT_EPILOGUE_RELU_BIAS;
    case LtEpilogue::kDefault: break;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

void make_layout(Layout& l, cudaDataType type, const LtLayout& s) {
  check_blas(cublasLtMatrixLayoutCreate(&l.d, type, static_cast<uint64_t>(s.rows), static_cast<uint64_t>(s.cols),
                                        static_cast<int64_t>(s.ld)),
             "cublasLtMatrixLayoutCreate");
}

std::string problem_key(const ColumnMajorGemm& c, const GemmTypes& t, LtEpilogue e, uint32_t align_a,
                        uint32_t align_b, uint32_t align_c, uint32_t align_bias) {
  return std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + " t" +
         std::to_string(c.trans_first) + std::to_string(c.trans_second) + " ty" + std::to_string(t.ab) + "/" +
         std::to_string(t.c) + (t.tf32 ? " tf32" : "") + " e" + std::to_string(static_cast<int>(e)) + " al" +
         std::to_string(align_a) + "," + std::to_string(align_b) + "," + std::to_string(align_c) + "," +
         std::to_string(align_bias);
}

}  // namespace

bool gemm_lt(StreamResources& res, const EpContext& ep, const RowMajorGemm& g, const GemmTypes& types, float alpha,
             const void* a, const void* b, const void* bias, LtEpilogue epilogue, void* c) {
  if (types.ab != types.c || (types.ab != LOOM_DTYPE_FLOAT && types.ab != LOOM_DTYPE_FLOAT16)) return false;
  if (g.m <= 0 || g.n <= 0 || g.k <= 0) return false;
  const ColumnMajorGemm cm = column_major(g);
  if (!fits_int(cm.m) || !fits_int(cm.n) || !fits_int(cm.k) || !fits_int(cm.ld_first) || !fits_int(cm.ld_second) ||
      !fits_int(cm.ldc))
    return false;
  const bool has_bias = epilogue == LtEpilogue::kBias || epilogue == LtEpilogue::kReluBias;
  if (has_bias != (bias != nullptr)) return false;
  const cudaDataType type = types.ab == LOOM_DTYPE_FLOAT ? CUDA_R_32F : CUDA_R_16F;
  const cublasComputeType_t compute =
      types.ab == LOOM_DTYPE_FLOAT && types.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  // cuBLAS's first operand is B (matmul_plan.h).
  const uint32_t align_first = pointer_alignment(reinterpret_cast<uintptr_t>(b));
  const uint32_t align_second = pointer_alignment(reinterpret_cast<uintptr_t>(a));
  const uint32_t align_c = pointer_alignment(reinterpret_cast<uintptr_t>(c));
  const uint32_t align_bias = has_bias ? pointer_alignment(reinterpret_cast<uintptr_t>(bias)) : 256;
  // The bias vector is read in 16-byte vectors by the epilogue kernels.
  if (align_bias < 16) return false;

  OpDesc op;
  check_blas(cublasLtMatmulDescCreate(&op.d, compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
  const cublasOperation_t op_first = cm.trans_first ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_second = cm.trans_second ? CUBLAS_OP_T : CUBLAS_OP_N;
  set(cublasLtMatmulDescSetAttribute, op.d, CUBLASLT_MATMUL_DESC_TRANSA, op_first, "cublasLt TRANSA");
  set(cublasLtMatmulDescSetAttribute, op.d, CUBLASLT_MATMUL_DESC_TRANSB, op_second, "cublasLt TRANSB");
  set(cublasLtMatmulDescSetAttribute, op.d, CUBLASLT_MATMUL_DESC_EPILOGUE, lt_value(epilogue), "cublasLt EPILOGUE");
  if (has_bias) {
    set(cublasLtMatmulDescSetAttribute, op.d, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias, "cublasLt BIAS_POINTER");
    const cudaDataType bias_type = type;
    set(cublasLtMatmulDescSetAttribute, op.d, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, bias_type,
        "cublasLt BIAS_DATA_TYPE");
  }
  const LtLayouts l = lt_layouts(cm);
  Layout first, second, out;
  make_layout(first, type, l.first);
  make_layout(second, type, l.second);
  make_layout(out, type, l.out);

  const std::string key = problem_key(cm, types, epilogue, align_first, align_second, align_c, align_bias);
  std::optional<LtChoice> choice = ep.lt_choices.find(key);
  if (!choice) {
    Preference pref;
    check_blas(cublasLtMatmulPreferenceCreate(&pref.d), "cublasLtMatmulPreferenceCreate");
    const uint64_t workspace = kWorkspaceBytes;
    set(cublasLtMatmulPreferenceSetAttribute, pref.d, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, workspace,
        "cublasLt MAX_WORKSPACE_BYTES");
    set(cublasLtMatmulPreferenceSetAttribute, pref.d, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, align_first,
        "cublasLt MIN_ALIGNMENT_A_BYTES");
    set(cublasLtMatmulPreferenceSetAttribute, pref.d, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, align_second,
        "cublasLt MIN_ALIGNMENT_B_BYTES");
    set(cublasLtMatmulPreferenceSetAttribute, pref.d, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align_c,
        "cublasLt MIN_ALIGNMENT_C_BYTES");
    set(cublasLtMatmulPreferenceSetAttribute, pref.d, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, align_c,
        "cublasLt MIN_ALIGNMENT_D_BYTES");
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(res.blas_lt(), op.d, first.d, second.d, out.d, out.d,
                                                            pref.d, 1, &result, &found);
    LtChoice made;
    made.found = s == CUBLAS_STATUS_SUCCESS && found > 0 && result.state == CUBLAS_STATUS_SUCCESS;
    if (made.found) {
      static_assert(sizeof(made.algo) == sizeof(result.algo), "cublasLtMatmulAlgo_t is 8 uint64");
      std::memcpy(made.algo.data(), &result.algo, sizeof(result.algo));
      made.workspace_bytes = result.workspaceSize;
    }
    ep.lt_choices.put(key, made);
    choice = made;
  }
  if (!choice->found) return false;

  cublasLtMatmulAlgo_t algo;
  std::memcpy(&algo, choice->algo.data(), sizeof(algo));
  void* workspace = nullptr;
  if (choice->workspace_bytes > 0) {
    void* raw = res.scratch(static_cast<size_t>(lt_workspace_request(choice->workspace_bytes)));
    workspace = reinterpret_cast<void*>(lt_workspace_start(reinterpret_cast<uintptr_t>(raw)));
  }
  const float beta = 0.f;
  check_blas(cublasLtMatmul(res.blas_lt(), op.d, &alpha, b, first.d, a, second.d, &beta, c, out.d, c, out.d, &algo,
                            workspace, choice->workspace_bytes, res.stream()),
             "cublasLtMatmul");
  return true;
}

}  // namespace loom::cuda
