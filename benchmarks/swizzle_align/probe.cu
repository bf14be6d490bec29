// Swizzle-alignment probe for Hopper (sm_90a): one warpgroup loads a 64-row A tile and a
// 64-row B tile with TMA (128B or 64B swizzle) into shared memory at a chosen byte offset
// from a 1024-byte boundary, multiplies them with WGMMA (m64n64k16, fp16 in, fp32 out) and
// writes D = A @ B^T, plus the raw shared-memory bytes of A as TMA wrote them.
//
// The WGMMA shared-memory descriptor's "base offset" field (bits 49-51) is either left 0 or
// set as the PTX ISA's matrix-descriptor section gives it: (start address >> 7) & 7.
//
// Built by benchmarks/swizzle_align_h200.py (nvcc -arch=sm_90a -shared); called through ctypes.
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#define ROWS 64
#define SMEM_BYTES (64 * 1024)

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ uint64_t make_desc(uint32_t addr, int layout, int sbo, int base_offset) {
  uint64_t d = 0;
  d |= (uint64_t)((addr & 0x3FFFF) >> 4);                 // start address, bits 0-13
  d |= (uint64_t)1 << 16;                                 // leading byte offset (unused: swizzled K-major)
  d |= (uint64_t)((sbo >> 4) & 0x3FFF) << 32;             // stride byte offset, bits 32-45
  d |= (uint64_t)(base_offset & 7) << 49;                 // base offset, bits 49-51
  d |= (uint64_t)(layout & 3) << 62;                      // 1 = 128B swizzle, 2 = 64B
  return d;
}

__global__ void __launch_bounds__(128) probe_kernel(const __grid_constant__ CUtensorMap map_a,
                                                    const __grid_constant__ CUtensorMap map_b, float* d_out,
                                                    uint8_t* a_bytes, int offset, int span, int set_base) {
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  uint32_t raw = smem_u32(smem_raw);
  uint32_t base = (raw + 1023u) & ~1023u;
  uint8_t* base_ptr = smem_raw + (base - raw);
  uint8_t* sA = base_ptr + offset;
  uint8_t* sB = base_ptr + 16384 + offset;
  uint64_t* bar = reinterpret_cast<uint64_t*>(base_ptr + 32768);
  int tile_bytes = ROWS * span;
  int tid = threadIdx.x;

  if (tid == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_u32(bar)));
    asm volatile("fence.mbarrier_init.release.cluster;");
    asm volatile("fence.proxy.async.shared::cta;");
  }
  __syncthreads();
  if (tid == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bar)), "r"(2 * tile_bytes));
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
            smem_u32(sA)),
        "l"(&map_a), "r"(0), "r"(0), "r"(smem_u32(bar))
        : "memory");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
            smem_u32(sB)),
        "l"(&map_b), "r"(0), "r"(0), "r"(smem_u32(bar))
        : "memory");
  }
  // wait for phase 0
  asm volatile(
      "{\n.reg .pred p;\nWAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n"
      "@!p bra WAIT;\n}" ::"r"(smem_u32(bar))
      : "memory");

  // the bytes of A as TMA placed them
  for (int i = tid; i < tile_bytes; i += 128) a_bytes[i] = sA[i];

  int layout = span == 128 ? 1 : 2;
  int sbo = 8 * span;  // eight rows of one swizzle span
  uint32_t a_addr = smem_u32(sA), b_addr = smem_u32(sB);
  int a_base = set_base ? (a_addr >> 7) & 7 : 0;
  int b_base = set_base ? (b_addr >> 7) & 7 : 0;
  float acc[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) acc[i] = 0.f;
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  int ksteps = span / 32;  // 16 fp16 (32 bytes) per k-step
  for (int k = 0; k < ksteps; ++k) {
    uint64_t da = make_desc(a_addr + 32 * k, layout, sbo, a_base);
    uint64_t db = make_desc(b_addr + 32 * k, layout, sbo, b_base);
    asm volatile(
        "{\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
        "%32, %33, 1, 1, 1, 0, 0;\n"
        "}\n"
        : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]), "+f"(acc[6]),
          "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]), "+f"(acc[10]), "+f"(acc[11]), "+f"(acc[12]), "+f"(acc[13]),
          "+f"(acc[14]), "+f"(acc[15]), "+f"(acc[16]), "+f"(acc[17]), "+f"(acc[18]), "+f"(acc[19]), "+f"(acc[20]),
          "+f"(acc[21]), "+f"(acc[22]), "+f"(acc[23]), "+f"(acc[24]), "+f"(acc[25]), "+f"(acc[26]), "+f"(acc[27]),
          "+f"(acc[28]), "+f"(acc[29]), "+f"(acc[30]), "+f"(acc[31])
        : "l"(da), "l"(db));
  }
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");

  int warp = tid / 32, lane = tid % 32;
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    int row = warp * 16 + lane / 4 + 8 * ((i >> 1) & 1);
    int col = (i >> 2) * 8 + (lane % 4) * 2 + (i & 1);
    d_out[row * 64 + col] = acc[i];
  }
}

typedef CUresult (*EncodeTiled)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

static int encode(CUtensorMap* map, const void* ptr, int span) {
  // the driver's entry point through the runtime, so that the library needs no libcuda at link time
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found;
  cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found);
  if (e || !fn) return 200000 + (int)e;
  EncodeTiled cuTensorMapEncodeTiled = reinterpret_cast<EncodeTiled>(fn);
  cuuint64_t dims[2] = {(cuuint64_t)(span / 2), ROWS};
  cuuint64_t strides[1] = {(cuuint64_t)span};
  cuuint32_t box[2] = {(cuuint32_t)(span / 2), ROWS};
  cuuint32_t estr[2] = {1, 1};
  CUresult r = cuTensorMapEncodeTiled(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, const_cast<void*>(ptr), dims, strides,
                                      box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                      span == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B,
                                      CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return (int)r;
}

// a (64 x span/2 fp16, row-major), b (64 x span/2 fp16, row-major) on the device; d (64 x 64 fp32),
// a_bytes (64 * span bytes). Returns 0, or a CUresult/cudaError_t code (+100000 for the runtime).
extern "C" int probe(const void* a, const void* b, void* d, void* a_bytes, int offset, int span, int set_base) {
  CUtensorMap map_a, map_b;
  int r = encode(&map_a, a, span);
  if (r) return r;
  r = encode(&map_b, b, span);
  if (r) return r;
  cudaError_t e = cudaFuncSetAttribute(probe_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES);
  if (e) return 100000 + (int)e;
  probe_kernel<<<1, 128, SMEM_BYTES>>>(map_a, map_b, (float*)d, (uint8_t*)a_bytes, offset, span, set_base);
  e = cudaGetLastError();
  if (e) return 100000 + (int)e;
  e = cudaDeviceSynchronize();
  if (e) return 100000 + (int)e;
  return 0;
}
