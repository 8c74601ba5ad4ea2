// One row-major product on cuBLASLt with an epilogue (bias, ReLU, both),
// so Gemm's bias and FusedGemm's ReLU need no pass of their own over the
// output. The plan (layouts, which epilogue) is kernels/lt_plan.h; the
// algorithm is chosen once per problem and pointer alignments and cached in
// the EP's context.
#pragma once

#include "ep_context.h"
#include "kernels/gemm_blas.h"
#include "kernels/lt_plan.h"
#include "stream_resources.h"

namespace loom::cuda {

// C[m, n] = epilogue(alpha * op(A) op(B)) with `bias` (n elements of C's
// type; NULL unless the epilogue has one), queued on `res`'s stream. Types
// as gemm_blas.h, float and float16 only (A/B and C of one type). Returns
// false, having queued nothing, when cuBLASLt offers no algorithm for the
// problem (the caller takes the general path); throws on a library error.
bool gemm_lt(StreamResources& res, const EpContext& ep, const RowMajorGemm& g, const GemmTypes& types, float alpha,
             const void* a, const void* b, const void* bias, LtEpilogue epilogue, void* c);

}  // namespace loom::cuda
