// One warp executes one shared-memory instruction once per launch, each lane at
// the byte offset read from a table in global memory. Nsight Compute counts the
// wavefronts and bank conflicts of each launch; the driver script gives every
// case its own launch, so each profiled kernel is exactly one case.
//
// usage: probe CASES_FILE INSTRUCTION   (runs the cases of that instruction, in file order)
// CASES_FILE lines: case_id instruction off0 ... off31   (offsets from the array's start)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <fstream>
#include <sstream>
#include <cuda_runtime.h>

#define SMEM_BYTES 49152

#define PROLOGUE                                                            \
    __shared__ __align__(1024) unsigned char smem[SMEM_BYTES];               \
    const unsigned lane = threadIdx.x;                                       \
    const unsigned base = (unsigned)__cvta_generic_to_shared(smem);          \
    const unsigned a = base + offs[lane];                                    \
    if (lane == 0) out[32] = base;

typedef void (*kernel_t)(const unsigned*, unsigned*, const uint4*);

// ---- ld.shared ----
__global__ void k_ld_u8(const unsigned* offs, unsigned* out, const uint4* g) {
    PROLOGUE unsigned short r;
    asm volatile("ld.shared.u8 %0, [%1];" : "=h"(r) : "r"(a) : "memory");
    out[lane] = r;
}
__global__ void k_ld_u16(const unsigned* offs, unsigned* out, const uint4* g) {
    PROLOGUE unsigned short r;
    asm volatile("ld.shared.u16 %0, [%1];" : "=h"(r) : "r"(a) : "memory");
    out[lane] = r;
}
__global__ void k_ld_b32(const unsigned* offs, unsigned* out, const uint4* g) {
    PROLOGUE unsigned r;
    asm volatile("ld.shared.b32 %0, [%1];" : "=r"(r) : "r"(a) : "memory");
    out[lane] = r;
}
__global__ void k_ld_b64(const unsigned* offs, unsigned* out, const uint4* g) {
    PROLOGUE unsigned long long r;
    asm volatile("ld.shared.b64 %0, [%1];" : "=l"(r) : "r"(a) : "memory");
    out[lane] = (unsigned)(r ^ (r >> 32));
}
__global__ void k_ld_v2(const unsigned* offs, unsigned* out, const uint4* g) {
    PROLOGUE unsigned r0, r1;
    asm volatile("ld.shared.v2.b32 {%0,%1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(a) : "memory");
    out[lane] = r0 ^ r1;
}
__global__ void k_ld_v4(const unsigned* offs, unsigned* out, const uint4* g) {
    PROLOGUE unsigned r0, r1, r2, r3;
    asm volatile("ld.shared.v4.b32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(a) : "memory");
    out[lane] = r0 ^ r1 ^ r2 ^ r3;
}
// ---- st.shared ----
__global__ void k_st_u8(const unsigned* offs, unsigned* out, const uint4* g) {
    PROLOGUE unsigned short v = (unsigned short)lane;
    asm volatile("st.shared.u8 [%0], %1;" :: "r"(a), "h"(v) : "memory");
}
__global__ void k_st_u16(const unsigned* offs, unsigned* out, const uint4* g) {
    PROLOGUE unsigned short v = (unsigned short)lane;
    asm volatile("st.shared.u16 [%0], %1;" :: "r"(a), "h"(v) : "memory");
}
__global__ void k_st_b32(const unsigned* offs, unsigned* out, const uint4* g) {
    PROLOGUE
    asm volatile("st.shared.b32 [%0], %1;" :: "r"(a), "r"(lane) : "memory");
}
__global__ void k_st_b64(const unsigned* offs, unsigned* out, const uint4* g) {
    PROLOGUE unsigned long long v = lane * 0x100000001ull;
    asm volatile("st.shared.b64 [%0], %1;" :: "r"(a), "l"(v) : "memory");
}
__global__ void k_st_v2(const unsigned* offs, unsigned* out, const uint4* g) {
    PROLOGUE
    asm volatile("st.shared.v2.b32 [%0], {%1,%2};" :: "r"(a), "r"(lane), "r"(lane + 1) : "memory");
}
__global__ void k_st_v4(const unsigned* offs, unsigned* out, const uint4* g) {
    PROLOGUE
    asm volatile("st.shared.v4.b32 [%0], {%1,%2,%3,%4};"
                 :: "r"(a), "r"(lane), "r"(lane + 1), "r"(lane + 2), "r"(lane + 3) : "memory");
}
// ---- ldmatrix ----
#define LDSM1(NAME, TR)                                                                       \
__global__ void NAME(const unsigned* offs, unsigned* out, const uint4* g) {                   \
    PROLOGUE unsigned r0;                                                                     \
    asm volatile("ldmatrix.sync.aligned.m8n8.x1" TR ".shared.b16 {%0}, [%1];"                 \
                 : "=r"(r0) : "r"(a) : "memory");                                             \
    out[lane] = r0;                                                                           \
}
#define LDSM2(NAME, TR)                                                                       \
__global__ void NAME(const unsigned* offs, unsigned* out, const uint4* g) {                   \
    PROLOGUE unsigned r0, r1;                                                                 \
    asm volatile("ldmatrix.sync.aligned.m8n8.x2" TR ".shared.b16 {%0,%1}, [%2];"              \
                 : "=r"(r0), "=r"(r1) : "r"(a) : "memory");                                   \
    out[lane] = r0 ^ r1;                                                                      \
}
#define LDSM4(NAME, TR)                                                                       \
__global__ void NAME(const unsigned* offs, unsigned* out, const uint4* g) {                   \
    PROLOGUE unsigned r0, r1, r2, r3;                                                         \
    asm volatile("ldmatrix.sync.aligned.m8n8.x4" TR ".shared.b16 {%0,%1,%2,%3}, [%4];"        \
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(a) : "memory");               \
    out[lane] = r0 ^ r1 ^ r2 ^ r3;                                                            \
}
LDSM1(k_ldsm_x1, "") LDSM2(k_ldsm_x2, "") LDSM4(k_ldsm_x4, "")
LDSM1(k_ldsm_x1_t, ".trans") LDSM2(k_ldsm_x2_t, ".trans") LDSM4(k_ldsm_x4_t, ".trans")
// ---- stmatrix ----
#define STSM1(NAME, TR)                                                                       \
__global__ void NAME(const unsigned* offs, unsigned* out, const uint4* g) {                   \
    PROLOGUE                                                                                  \
    asm volatile("stmatrix.sync.aligned.m8n8.x1" TR ".shared.b16 [%0], {%1};"                 \
                 :: "r"(a), "r"(lane) : "memory");                                            \
}
#define STSM2(NAME, TR)                                                                       \
__global__ void NAME(const unsigned* offs, unsigned* out, const uint4* g) {                   \
    PROLOGUE                                                                                  \
    asm volatile("stmatrix.sync.aligned.m8n8.x2" TR ".shared.b16 [%0], {%1,%2};"              \
                 :: "r"(a), "r"(lane), "r"(lane + 1) : "memory");                             \
}
#define STSM4(NAME, TR)                                                                       \
__global__ void NAME(const unsigned* offs, unsigned* out, const uint4* g) {                   \
    PROLOGUE                                                                                  \
    asm volatile("stmatrix.sync.aligned.m8n8.x4" TR ".shared.b16 [%0], {%1,%2,%3,%4};"        \
                 :: "r"(a), "r"(lane), "r"(lane + 1), "r"(lane + 2), "r"(lane + 3) : "memory"); \
}
STSM1(k_stsm_x1, "") STSM2(k_stsm_x2, "") STSM4(k_stsm_x4, "")
STSM1(k_stsm_x1_t, ".trans") STSM2(k_stsm_x2_t, ".trans") STSM4(k_stsm_x4_t, ".trans")
// ---- cp.async (global -> shared), each lane's source its own 16-B slot ----
#define CPASYNC(NAME, CACHE, N)                                                               \
__global__ void NAME(const unsigned* offs, unsigned* out, const uint4* g) {                   \
    PROLOGUE                                                                                  \
    const uint4* src = g + lane;                                                              \
    asm volatile("cp.async." CACHE ".shared.global [%0], [%1], " #N ";"                       \
                 :: "r"(a), "l"(src) : "memory");                                             \
    asm volatile("cp.async.wait_all;" ::: "memory");                                          \
}
CPASYNC(k_cpasync_ca4, "ca", 4) CPASYNC(k_cpasync_ca8, "ca", 8)
CPASYNC(k_cpasync_ca16, "ca", 16) CPASYNC(k_cpasync_cg16, "cg", 16)

struct Entry { const char* instruction; kernel_t kernel; };
static const Entry TABLE[] = {
    {"ld.shared.u8", k_ld_u8}, {"ld.shared.u16", k_ld_u16}, {"ld.shared.b32", k_ld_b32},
    {"ld.shared.b64", k_ld_b64}, {"ld.shared.v2.b32", k_ld_v2}, {"ld.shared.v4.b32", k_ld_v4},
    {"st.shared.u8", k_st_u8}, {"st.shared.u16", k_st_u16}, {"st.shared.b32", k_st_b32},
    {"st.shared.b64", k_st_b64}, {"st.shared.v2.b32", k_st_v2}, {"st.shared.v4.b32", k_st_v4},
    {"ldmatrix.x1", k_ldsm_x1}, {"ldmatrix.x2", k_ldsm_x2}, {"ldmatrix.x4", k_ldsm_x4},
    {"ldmatrix.x1.trans", k_ldsm_x1_t}, {"ldmatrix.x2.trans", k_ldsm_x2_t},
    {"ldmatrix.x4.trans", k_ldsm_x4_t},
    {"stmatrix.x1", k_stsm_x1}, {"stmatrix.x2", k_stsm_x2}, {"stmatrix.x4", k_stsm_x4},
    {"stmatrix.x1.trans", k_stsm_x1_t}, {"stmatrix.x2.trans", k_stsm_x2_t},
    {"stmatrix.x4.trans", k_stsm_x4_t},
    {"cp.async.ca.4", k_cpasync_ca4}, {"cp.async.ca.8", k_cpasync_ca8},
    {"cp.async.ca.16", k_cpasync_ca16}, {"cp.async.cg.16", k_cpasync_cg16},
};

#define CHECK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) {                    \
    fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
    return 2; } } while (0)

int main(int argc, char** argv) {
    if (argc != 3) { fprintf(stderr, "usage: probe CASES_FILE INSTRUCTION\n"); return 1; }
    kernel_t kernel = nullptr;
    for (const Entry& e : TABLE) if (strcmp(e.instruction, argv[2]) == 0) kernel = e.kernel;
    if (!kernel) { fprintf(stderr, "unknown instruction %s\n", argv[2]); return 1; }
    std::ifstream in(argv[1]);
    std::string line;
    std::vector<std::pair<int, std::vector<unsigned>>> cases;
    while (std::getline(in, line)) {
        std::istringstream ss(line);
        int id; std::string instr;
        if (!(ss >> id >> instr) || instr != argv[2]) continue;
        std::vector<unsigned> offs(32);
        for (int i = 0; i < 32; ++i) ss >> offs[i];
        for (unsigned o : offs) if (o >= SMEM_BYTES) { fprintf(stderr, "case %d: offset %u\n", id, o); return 1; }
        cases.emplace_back(id, offs);
    }
    unsigned *d_offs, *d_out; uint4* d_g;
    CHECK(cudaMalloc(&d_offs, 32 * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_out, 64 * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_g, 64 * sizeof(uint4)));
    CHECK(cudaMemset(d_g, 0x5a, 64 * sizeof(uint4)));
    for (auto& c : cases) {
        CHECK(cudaMemcpy(d_offs, c.second.data(), 32 * sizeof(unsigned), cudaMemcpyHostToDevice));
        kernel<<<1, 32>>>(d_offs, d_out, d_g);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        unsigned base = 0;
        CHECK(cudaMemcpy(&base, d_out + 32, sizeof(unsigned), cudaMemcpyDeviceToHost));
        printf("launched %d %s base %u\n", c.first, argv[2], base);
        fflush(stdout);
    }
    return 0;
}
