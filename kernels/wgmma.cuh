#pragma once

// wgmma.mma_async with fp32 accumulators, in the forms the Hopper kernels issue. Each wrapper is
// written once for every 16-bit storage format: ROOFLINE_WITH_PTX_TYPE (tc_ptx.cuh) spells the
// operand type of T into the instruction (8-bit formats are k = 32 shapes, wrappers of their own).
//   m64n256k16    A and B from shared memory, both K-major (the GEMM and the tensor-core peak probe);
//   m64n256k32    the same for 8-bit operands (e4m3, e5m2: the FP8 GEMM). 8-bit wgmma reads both
//                 operands K-major only, so the instruction has no transpose operands;
//   m64n256k16_ss_trans_b  A K-major, B N-major (imm-trans-b = 1): O += P V with P in shared memory;
//   m64nNk16_ss   the same for N = 16, 32, 64, 80, 128 and 160 (S = Q K^T in flash attention: Q and K
//                 rows are d-contiguous; the skinny GEMV, N = its batch; the GEMM's narrower tiles);
//   m64nNk16_rs   A from registers (the m16n8k16 A-fragment layout per warp), B from shared memory
//                 N-major (imm-trans-b = 1: O += P V with V stored [key][d], d contiguous), for
//                 N = 64, 128 and 256 (the head dims of flash attention);
//   m64nNk32_ss   8-bit, N = 16, 32 and 64 (the grouped GEMV of FP8 experts);
//   m64n128k32_ss, m64nNk32_rs  the 8-bit forms of the two flash-attention products (FP8 flash: V
//                 transposed beforehand, since 8-bit B is read K-major only).
// d holds the warpgroup's 64 x N fp32 tile, N / 2 registers per thread; scale_d = 0 overwrites d,
// 1 accumulates into it.

#include <cstdint>

#include "storage_format.cuh"
#include "tc_ptx.cuh"

namespace roofline::kernels::ptx {

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define ROOFLINE_WGMMA_D8 "{%0, %1, %2, %3, %4, %5, %6, %7}, "
#define ROOFLINE_WGMMA_ACC8 \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
#define ROOFLINE_WGMMA_D16 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "
#define ROOFLINE_WGMMA_ACC16                                                                                  \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), \
      "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
#define ROOFLINE_WGMMA_D32                                                                                          \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, " \
  "%24, %25, %26, %27, %28, %29, %30, %31}, "
#define ROOFLINE_WGMMA_ACC32                                                                                  \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), \
      "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),  \
      "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), \
      "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define ROOFLINE_WGMMA_D40                                                                                          \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, " \
  "%24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39}, "
#define ROOFLINE_WGMMA_ACC40                                                                                  \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), \
      "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),  \
      "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), \
      "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), \
      "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39])
#define ROOFLINE_WGMMA_D64                                                                                          \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, " \
  "%24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, "  \
  "%46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
#define ROOFLINE_WGMMA_ACC64                                                                                  \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), \
      "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),  \
      "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), \
      "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), \
      "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), \
      "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), \
      "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), \
      "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define ROOFLINE_WGMMA_D80                                                                                          \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, " \
  "%24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, "  \
  "%46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, "  \
  "%68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79}, "
#define ROOFLINE_WGMMA_ACC80                                                                                  \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), \
      "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),  \
      "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), \
      "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), \
      "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), \
      "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), \
      "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), \
      "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), \
      "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), \
      "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79])
#define ROOFLINE_WGMMA_D128                                                                                         \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, " \
  "%24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, "  \
  "%46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, "  \
  "%68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, "  \
  "%90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, "  \
  "%110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
#define ROOFLINE_WGMMA_ACC128                                                                                         \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),         \
      "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),          \
      "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),         \
      "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),         \
      "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),         \
      "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),         \
      "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),         \
      "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]),         \
      "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]),         \
      "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]),         \
      "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]),         \
      "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]),         \
      "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]),    \
      "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), \
      "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), \
      "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])

// A and B from shared-memory descriptors; the accumulators are operands 0 .. N/2 - 1, then desc_a,
// desc_b and scale_d. TRANS_B "1" reads B N-major (imm-trans-b), "0" K-major; the accumulator
// operands come last (they expand to a list).
#define ROOFLINE_WGMMA_SS_TB(SHAPE, TYPE, D, A, B, SCALE, TRANS_B, ...)                                        \
  asm volatile(                                                                                                \
      "{\n"                                                                                                    \
      ".reg .pred p;\n"                                                                                        \
      "setp.ne.b32 p, %" SCALE                                                                                 \
      ", 0;\n"                                                                                                 \
      "wgmma.mma_async.sync.aligned." SHAPE ".f32." TYPE "." TYPE " " D "%" A ", %" B ", p, 1, 1, 0, " TRANS_B \
      ";\n"                                                                                                    \
      "}\n"                                                                                                    \
      : __VA_ARGS__                                                                                            \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d))
#define ROOFLINE_WGMMA_SS(SHAPE, TYPE, D, ACC, A, B, SCALE) ROOFLINE_WGMMA_SS_TB(SHAPE, TYPE, D, A, B, SCALE, "0", ACC)

// The 8-bit form: scale-d, then imm-scale-a and imm-scale-b (no imm-trans operands).
#define ROOFLINE_WGMMA_SS_8BIT(SHAPE, TYPE, D, ACC, A, B, SCALE)                      \
  asm volatile(                                                                       \
      "{\n"                                                                           \
      ".reg .pred p;\n"                                                               \
      "setp.ne.b32 p, %" SCALE                                                        \
      ", 0;\n"                                                                        \
      "wgmma.mma_async.sync.aligned." SHAPE ".f32." TYPE "." TYPE " " D "%" A ", %" B \
      ", p, 1, 1;\n"                                                                  \
      "}\n"                                                                           \
      : ACC                                                                           \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d))

#define ROOFLINE_WGMMA_M64N256K32(TYPE) \
  ROOFLINE_WGMMA_SS_8BIT("m64n256k32", TYPE, ROOFLINE_WGMMA_D128, ROOFLINE_WGMMA_ACC128, "128", "129", "130")
#define ROOFLINE_WGMMA_M64N128K32_SS(TYPE) \
  ROOFLINE_WGMMA_SS_8BIT("m64n128k32", TYPE, ROOFLINE_WGMMA_D64, ROOFLINE_WGMMA_ACC64, "64", "65", "66")
#define ROOFLINE_WGMMA_M64N16K32_SS(TYPE) \
  ROOFLINE_WGMMA_SS_8BIT("m64n16k32", TYPE, ROOFLINE_WGMMA_D8, ROOFLINE_WGMMA_ACC8, "8", "9", "10")
#define ROOFLINE_WGMMA_M64N32K32_SS(TYPE) \
  ROOFLINE_WGMMA_SS_8BIT("m64n32k32", TYPE, ROOFLINE_WGMMA_D16, ROOFLINE_WGMMA_ACC16, "16", "17", "18")
#define ROOFLINE_WGMMA_M64N64K32_SS(TYPE) \
  ROOFLINE_WGMMA_SS_8BIT("m64n64k32", TYPE, ROOFLINE_WGMMA_D32, ROOFLINE_WGMMA_ACC32, "32", "33", "34")
#define ROOFLINE_WGMMA_M64N256K16(TYPE) \
  ROOFLINE_WGMMA_SS("m64n256k16", TYPE, ROOFLINE_WGMMA_D128, ROOFLINE_WGMMA_ACC128, "128", "129", "130")
#define ROOFLINE_WGMMA_M64N256K16_SS_TRANS_B(TYPE) \
  ROOFLINE_WGMMA_SS_TB("m64n256k16", TYPE, ROOFLINE_WGMMA_D128, "128", "129", "130", "1", ROOFLINE_WGMMA_ACC128)
#define ROOFLINE_WGMMA_M64N16K16_SS(TYPE) \
  ROOFLINE_WGMMA_SS("m64n16k16", TYPE, ROOFLINE_WGMMA_D8, ROOFLINE_WGMMA_ACC8, "8", "9", "10")
#define ROOFLINE_WGMMA_M64N32K16_SS(TYPE) \
  ROOFLINE_WGMMA_SS("m64n32k16", TYPE, ROOFLINE_WGMMA_D16, ROOFLINE_WGMMA_ACC16, "16", "17", "18")
#define ROOFLINE_WGMMA_M64N64K16_SS(TYPE) \
  ROOFLINE_WGMMA_SS("m64n64k16", TYPE, ROOFLINE_WGMMA_D32, ROOFLINE_WGMMA_ACC32, "32", "33", "34")
#define ROOFLINE_WGMMA_M64N80K16_SS(TYPE) \
  ROOFLINE_WGMMA_SS("m64n80k16", TYPE, ROOFLINE_WGMMA_D40, ROOFLINE_WGMMA_ACC40, "40", "41", "42")
#define ROOFLINE_WGMMA_M64N160K16_SS(TYPE) \
  ROOFLINE_WGMMA_SS("m64n160k16", TYPE, ROOFLINE_WGMMA_D80, ROOFLINE_WGMMA_ACC80, "80", "81", "82")
#define ROOFLINE_WGMMA_M64N128K16_SS(TYPE) \
  ROOFLINE_WGMMA_SS("m64n128k16", TYPE, ROOFLINE_WGMMA_D64, ROOFLINE_WGMMA_ACC64, "64", "65", "66")
// A from registers, B from shared memory N-major: the accumulators are operands 0 .. N/2 - 1, then
// the four A registers, desc_b and scale_d (A0 .. SCALE name their operand numbers).
#define ROOFLINE_WGMMA_RS(SHAPE, TYPE, D, ACC, A0, A1, A2, A3, B, SCALE)                                            \
  asm volatile(                                                                                                     \
      "{\n"                                                                                                         \
      ".reg .pred p;\n"                                                                                             \
      "setp.ne.b32 p, %" SCALE                                                                                      \
      ", 0;\n"                                                                                                      \
      "wgmma.mma_async.sync.aligned." SHAPE ".f32." TYPE "." TYPE " " D "{%" A0 ", %" A1 ", %" A2 ", %" A3 "}, %" B \
      ", p, 1, 1, 1;\n"                                                                                             \
      "}\n"                                                                                                         \
      : ACC                                                                                                         \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d))
// The 8-bit form of A from registers: B K-major (no imm-trans-b), scale-d, imm-scale-a, imm-scale-b.
#define ROOFLINE_WGMMA_RS_8BIT(SHAPE, TYPE, D, ACC, A0, A1, A2, A3, B, SCALE)                                       \
  asm volatile(                                                                                                     \
      "{\n"                                                                                                         \
      ".reg .pred p;\n"                                                                                             \
      "setp.ne.b32 p, %" SCALE                                                                                      \
      ", 0;\n"                                                                                                      \
      "wgmma.mma_async.sync.aligned." SHAPE ".f32." TYPE "." TYPE " " D "{%" A0 ", %" A1 ", %" A2 ", %" A3 "}, %" B \
      ", p, 1, 1;\n"                                                                                                \
      "}\n"                                                                                                         \
      : ACC                                                                                                         \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d))
#define ROOFLINE_WGMMA_M64N128K32_RS(TYPE)                                                                           \
  ROOFLINE_WGMMA_RS_8BIT("m64n128k32", TYPE, ROOFLINE_WGMMA_D64, ROOFLINE_WGMMA_ACC64, "64", "65", "66", "67", "68", \
                         "69")
#define ROOFLINE_WGMMA_M64N256K32_RS(TYPE)                                                                           \
  ROOFLINE_WGMMA_RS_8BIT("m64n256k32", TYPE, ROOFLINE_WGMMA_D128, ROOFLINE_WGMMA_ACC128, "128", "129", "130", "131", \
                         "132", "133")
#define ROOFLINE_WGMMA_M64N64K16_RS(TYPE) \
  ROOFLINE_WGMMA_RS("m64n64k16", TYPE, ROOFLINE_WGMMA_D32, ROOFLINE_WGMMA_ACC32, "32", "33", "34", "35", "36", "37")
#define ROOFLINE_WGMMA_M64N128K16_RS(TYPE) \
  ROOFLINE_WGMMA_RS("m64n128k16", TYPE, ROOFLINE_WGMMA_D64, ROOFLINE_WGMMA_ACC64, "64", "65", "66", "67", "68", "69")
#define ROOFLINE_WGMMA_M64N256K16_RS(TYPE)                                                                             \
  ROOFLINE_WGMMA_RS("m64n256k16", TYPE, ROOFLINE_WGMMA_D128, ROOFLINE_WGMMA_ACC128, "128", "129", "130", "131", "132", \
                    "133")

template <typename T>
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], uint64_t desc_a, uint64_t desc_b, int scale_d) {
  static_assert(TraitsOf<T>::bits == 16, "k = 16 shapes take 16-bit operands");
  ROOFLINE_WITH_PTX_TYPE(T, ROOFLINE_WGMMA_M64N256K16);
}

// m64n256k16 with both operands from shared memory, A K-major and B N-major (O += P V with P in
// shared memory and V stored [key][d], d contiguous: latent attention's second warpgroup).
template <typename T>
__device__ __forceinline__ void wgmma_m64n256k16_ss_trans_b(float (&d)[128], uint64_t desc_a, uint64_t desc_b,
                                                            int scale_d) {
  static_assert(TraitsOf<T>::bits == 16, "k = 16 shapes take 16-bit operands");
  ROOFLINE_WITH_PTX_TYPE(T, ROOFLINE_WGMMA_M64N256K16_SS_TRANS_B);
}

template <typename T>
__device__ __forceinline__ void wgmma_m64n256k32(float (&d)[128], uint64_t desc_a, uint64_t desc_b, int scale_d) {
  static_assert(TraitsOf<T>::bits == 8, "k = 32 shapes take 8-bit operands");
  ROOFLINE_WITH_PTX_TYPE(T, ROOFLINE_WGMMA_M64N256K32);
}

template <typename T>
__device__ __forceinline__ void wgmma_m64n64k16_ss(float (&d)[32], uint64_t desc_a, uint64_t desc_b, int scale_d) {
  static_assert(TraitsOf<T>::bits == 16, "k = 16 shapes take 16-bit operands");
  ROOFLINE_WITH_PTX_TYPE(T, ROOFLINE_WGMMA_M64N64K16_SS);
}

template <typename T>
__device__ __forceinline__ void wgmma_m64n128k16_ss(float (&d)[64], uint64_t desc_a, uint64_t desc_b, int scale_d) {
  static_assert(TraitsOf<T>::bits == 16, "k = 16 shapes take 16-bit operands");
  ROOFLINE_WITH_PTX_TYPE(T, ROOFLINE_WGMMA_M64N128K16_SS);
}

// m64nNk16 with both operands from shared memory, for the N the skinny kernels tile by (the
// GEMV of gemv_wgmma.cu: N = the batch, rounded up).
template <typename T, int N>
__device__ __forceinline__ void wgmma_m64nNk16_ss(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b, int scale_d) {
  static_assert(TraitsOf<T>::bits == 16, "k = 16 shapes take 16-bit operands");
  if constexpr (N == 16) {
    ROOFLINE_WITH_PTX_TYPE(T, ROOFLINE_WGMMA_M64N16K16_SS);
  } else if constexpr (N == 32) {
    ROOFLINE_WITH_PTX_TYPE(T, ROOFLINE_WGMMA_M64N32K16_SS);
  } else if constexpr (N == 64) {
    ROOFLINE_WITH_PTX_TYPE(T, ROOFLINE_WGMMA_M64N64K16_SS);
  } else if constexpr (N == 80) {
    ROOFLINE_WITH_PTX_TYPE(T, ROOFLINE_WGMMA_M64N80K16_SS);
  } else if constexpr (N == 128) {
    ROOFLINE_WITH_PTX_TYPE(T, ROOFLINE_WGMMA_M64N128K16_SS);
  } else if constexpr (N == 160) {
    ROOFLINE_WITH_PTX_TYPE(T, ROOFLINE_WGMMA_M64N160K16_SS);
  } else {
    static_assert(N == 256, "wgmma_m64nNk16_ss is written for N = 16, 32, 64, 80, 128, 160 and 256");
    ROOFLINE_WITH_PTX_TYPE(T, ROOFLINE_WGMMA_M64N256K16);
  }
}

// m64nNk32 with 8-bit A and B from shared memory, both K-major, for N = 16, 32 and 64 (the grouped
// GEMV of FP8 experts: W's rows as A, a decode step's tokens as N).
template <typename T, int N>
__device__ __forceinline__ void wgmma_m64nNk32_ss(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b, int scale_d) {
  static_assert(TraitsOf<T>::bits == 8, "k = 32 shapes take 8-bit operands");
  if constexpr (N == 16) {
    ROOFLINE_WITH_PTX_TYPE(T, ROOFLINE_WGMMA_M64N16K32_SS);
  } else if constexpr (N == 32) {
    ROOFLINE_WITH_PTX_TYPE(T, ROOFLINE_WGMMA_M64N32K32_SS);
  } else {
    static_assert(N == 64, "wgmma_m64nNk32_ss is written for N = 16, 32 and 64");
    ROOFLINE_WITH_PTX_TYPE(T, ROOFLINE_WGMMA_M64N64K32_SS);
  }
}

// m64nNk16 with A from registers, for N = 64, 128 and 256 (O += P V at head dim 64, 128 and 256).
template <typename T, int N>
__device__ __forceinline__ void wgmma_m64nNk16_rs(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t desc_b,
                                                  int scale_d) {
  static_assert(TraitsOf<T>::bits == 16, "k = 16 shapes take 16-bit operands");
  if constexpr (N == 64) {
    ROOFLINE_WITH_PTX_TYPE(T, ROOFLINE_WGMMA_M64N64K16_RS);
  } else if constexpr (N == 128) {
    ROOFLINE_WITH_PTX_TYPE(T, ROOFLINE_WGMMA_M64N128K16_RS);
  } else {
    static_assert(N == 256, "wgmma_m64nNk16_rs is written for N = 64, 128 and 256");
    ROOFLINE_WITH_PTX_TYPE(T, ROOFLINE_WGMMA_M64N256K16_RS);
  }
}

// m64n128k32 with 8-bit A and B from shared memory, both K-major (S = Q K^T of FP8 flash attention).
template <typename T>
__device__ __forceinline__ void wgmma_m64n128k32_ss(float (&d)[64], uint64_t desc_a, uint64_t desc_b, int scale_d) {
  static_assert(TraitsOf<T>::bits == 8, "k = 32 shapes take 8-bit operands");
  ROOFLINE_WITH_PTX_TYPE(T, ROOFLINE_WGMMA_M64N128K32_SS);
}

// m64nNk32 with 8-bit A from registers and B from shared memory K-major, for N = 128 and 256 (O += P V
// of FP8 flash attention: P in the 8-bit A-fragment layout, V stored transposed, keys contiguous).
// The A fragment of one k step is four registers of four 8-bit values: {row g, k 4c..4c+3},
// {row g+8, k 4c..4c+3}, {row g, k 16+4c..}, {row g+8, k 16+4c..} (g = lane / 4, c = lane % 4; the
// lowest byte holds the lowest k).
template <typename T, int N>
__device__ __forceinline__ void wgmma_m64nNk32_rs(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t desc_b,
                                                  int scale_d) {
  static_assert(TraitsOf<T>::bits == 8, "k = 32 shapes take 8-bit operands");
  if constexpr (N == 128) {
    ROOFLINE_WITH_PTX_TYPE(T, ROOFLINE_WGMMA_M64N128K32_RS);
  } else {
    static_assert(N == 256, "wgmma_m64nNk32_rs is written for N = 128 and 256");
    ROOFLINE_WITH_PTX_TYPE(T, ROOFLINE_WGMMA_M64N256K32_RS);
  }
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

}  // namespace roofline::kernels::ptx
