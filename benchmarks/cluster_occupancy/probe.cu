// What the CUDA driver says about clusters on the GPU present: cudaOccupancyMaxActiveClusters over
// cluster shapes x dynamic shared memory x threads per CTA (with the CTAs per SM it gives without
// clusters beside each), and which SMs share a GPC, read off %smid of the CTAs of launched clusters
// (a cluster's CTAs always run in one GPC, so SMs that ever share a cluster share a GPC).
//
//   nvcc -arch=sm_90 -O2 -o probe probe.cu && ./probe > cluster_occupancy.csv
//
// Lines starting with '#' are facts of the device and the GPC readout; the rest is one CSV table.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#define CHECK(x)                                                                              \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));      \
      exit(1);                                                                                \
    }                                                                                         \
  } while (0)

__global__ void empty_kernel() {
  extern __shared__ char smem[];
  if (threadIdx.x == 0x7fffffff) smem[0] = 0;  // never true: keeps the dynamic array declared
}

__global__ void empty_kernel_nonportable() {
  extern __shared__ char smem[];
  if (threadIdx.x == 0x7fffffff) smem[0] = 0;
}

// each CTA writes the SM it ran on, then spins for a time that varies by block, so that later
// clusters land on different subsets of the SMs
__global__ void where_kernel(int *smid_out, long long spin_base) {
  extern __shared__ char smem[];
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  if (threadIdx.x == 0) smid_out[blockIdx.x] = (int)s;
  unsigned h = blockIdx.x * 2654435761u;
  long long until = clock64() + spin_base + (long long)((h >> 20) & 4095) * 8;
  while (clock64() < until) {
  }
  if (threadIdx.x == 0x7fffffff) smem[0] = 0;
}

static int find(std::vector<int> &p, int x) {
  while (p[x] != x) x = p[x] = p[p[x]];
  return x;
}

int main() {
  int dev = 0;
  CHECK(cudaSetDevice(dev));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, dev));
  int sms = 0, cluster_launch = 0, smem_sm = 0, smem_optin = 0, reserved = 0, blocks_sm = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CHECK(cudaDeviceGetAttribute(&cluster_launch, cudaDevAttrClusterLaunch, dev));
  CHECK(cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
  CHECK(cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  CHECK(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev));
  CHECK(cudaDeviceGetAttribute(&blocks_sm, cudaDevAttrMaxBlocksPerMultiprocessor, dev));
  int drv = 0, rt = 0;
  CHECK(cudaDriverGetVersion(&drv));
  CHECK(cudaRuntimeGetVersion(&rt));
  cudaFuncAttributes fa;
  CHECK(cudaFuncGetAttributes(&fa, empty_kernel));
  printf("# device: %s, compute capability %d.%d\n", prop.name, prop.major, prop.minor);
  printf("# driver version %d, runtime version %d\n", drv, rt);
  printf("# cudaDevAttrMultiProcessorCount: %d\n", sms);
  printf("# cudaDevAttrClusterLaunch: %d\n", cluster_launch);
  printf("# cudaDevAttrMaxSharedMemoryPerMultiprocessor: %d\n", smem_sm);
  printf("# cudaDevAttrMaxSharedMemoryPerBlockOptin: %d\n", smem_optin);
  printf("# cudaDevAttrReservedSharedMemoryPerBlock: %d\n", reserved);
  printf("# cudaDevAttrMaxBlocksPerMultiprocessor: %d\n", blocks_sm);
  printf("# L2 bytes: %d, l1/smem per SM (sharedMemPerMultiprocessor): %zu\n", prop.l2CacheSize,
         prop.sharedMemPerMultiprocessor);
  printf("# empty kernel: %d registers per thread\n", fa.numRegs);

  CHECK(cudaFuncSetAttribute(empty_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_optin));
  CHECK(cudaFuncSetAttribute(empty_kernel_nonportable, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_optin));
  CHECK(cudaFuncSetAttribute(empty_kernel_nonportable, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));

  const int KB = 1024;
  const int smem_sizes[] = {0, 30 * KB, 40 * KB, 50 * KB, 60 * KB, 100 * KB, 150 * KB, 227 * KB};
  const int thread_counts[] = {128, 256, 384};
  struct Shape { int x, y, z; };
  std::vector<Shape> shapes;
  for (int k = 1; k <= 16; ++k) shapes.push_back({k, 1, 1});
  shapes.push_back({2, 2, 1});
  shapes.push_back({4, 2, 1});
  shapes.push_back({2, 2, 2});
  shapes.push_back({4, 4, 1});

  printf("cluster_x,cluster_y,cluster_z,cluster_size,nonportable,threads,dynamic_smem,ctas_per_sm,max_active_clusters,status\n");
  for (int threads : thread_counts) {
    for (int smem : smem_sizes) {
      if (smem > smem_optin) continue;
      int per_sm = 0;
      CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, empty_kernel, threads, smem));
      for (const Shape &s : shapes) {
        int size = s.x * s.y * s.z;
        for (int nonportable = 0; nonportable <= 1; ++nonportable) {
          if (!nonportable && size > 8) continue;  // portable limit
          cudaLaunchConfig_t cfg;
          memset(&cfg, 0, sizeof(cfg));
          cfg.gridDim = dim3(s.x * 8, s.y, s.z);
          cfg.blockDim = dim3(threads, 1, 1);
          cfg.dynamicSmemBytes = smem;
          cudaLaunchAttribute attr[1];
          attr[0].id = cudaLaunchAttributeClusterDimension;
          attr[0].val.clusterDim.x = s.x;
          attr[0].val.clusterDim.y = s.y;
          attr[0].val.clusterDim.z = s.z;
          cfg.attrs = attr;
          cfg.numAttrs = 1;
          int clusters = -1;
          cudaError_t e = nonportable
                              ? cudaOccupancyMaxActiveClusters(&clusters, (void *)empty_kernel_nonportable, &cfg)
                              : cudaOccupancyMaxActiveClusters(&clusters, (void *)empty_kernel, &cfg);
          const char *status = e == cudaSuccess ? "ok" : cudaGetErrorName(e);
          if (e != cudaSuccess) {
            clusters = -1;
            cudaGetLastError();
          }
          printf("%d,%d,%d,%d,%d,%d,%d,%d,%d,%s\n", s.x, s.y, s.z, size, nonportable, threads, smem, per_sm,
                 clusters, status);
        }
      }
    }
  }
  fflush(stdout);

  // GPC readout: launch clusters of 16, 8, 4 and 2 CTAs, one CTA per SM (150 KB each), many waves;
  // union the SMs of each cluster
  CHECK(cudaFuncSetAttribute(where_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_optin));
  CHECK(cudaFuncSetAttribute(where_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  int max_smid = 1024;
  std::vector<int> parent(max_smid);
  std::vector<int> seen(max_smid, 0);
  for (int i = 0; i < max_smid; ++i) parent[i] = i;
  const int ks[] = {16, 8, 4, 2};
  for (int k : ks) {
    for (int rep = 0; rep < 4; ++rep) {
      int blocks = k * 64 * 8;  // more clusters than fit at once: several waves
      int *d = nullptr;
      CHECK(cudaMalloc(&d, blocks * sizeof(int)));
      CHECK(cudaMemset(d, 0xff, blocks * sizeof(int)));
      cudaLaunchConfig_t cfg;
      memset(&cfg, 0, sizeof(cfg));
      cfg.gridDim = dim3(blocks, 1, 1);
      cfg.blockDim = dim3(128, 1, 1);
      cfg.dynamicSmemBytes = 150 * KB;
      cudaLaunchAttribute attr[1];
      attr[0].id = cudaLaunchAttributeClusterDimension;
      attr[0].val.clusterDim.x = k;
      attr[0].val.clusterDim.y = 1;
      attr[0].val.clusterDim.z = 1;
      cfg.attrs = attr;
      cfg.numAttrs = 1;
      cudaError_t e = cudaLaunchKernelEx(&cfg, where_kernel, d, (long long)(20000 + 7919 * rep));
      if (e == cudaSuccess) e = cudaDeviceSynchronize();
      if (e != cudaSuccess) {
        printf("# gpc readout: cluster %d launch failed: %s\n", k, cudaGetErrorString(e));
        cudaGetLastError();
        cudaFree(d);
        continue;
      }
      std::vector<int> h(blocks);
      CHECK(cudaMemcpy(h.data(), d, blocks * sizeof(int), cudaMemcpyDeviceToHost));
      CHECK(cudaFree(d));
      for (int c = 0; c < blocks / k; ++c) {
        int first = h[c * k];
        if (first < 0 || first >= max_smid) continue;
        seen[first] = 1;
        for (int j = 1; j < k; ++j) {
          int s = h[c * k + j];
          if (s < 0 || s >= max_smid) continue;
          seen[s] = 1;
          parent[find(parent, s)] = find(parent, first);
        }
      }
    }
  }
  std::vector<std::vector<int>> groups(max_smid);
  int n_seen = 0;
  for (int i = 0; i < max_smid; ++i)
    if (seen[i]) {
      groups[find(parent, i)].push_back(i);
      ++n_seen;
    }
  std::vector<std::vector<int>> gpcs;
  for (auto &g : groups)
    if (!g.empty()) gpcs.push_back(g);
  std::sort(gpcs.begin(), gpcs.end(), [](const std::vector<int> &a, const std::vector<int> &b) {
    return a.size() != b.size() ? a.size() > b.size() : a[0] < b[0];
  });
  printf("# gpc readout: %d SMs seen in %zu groups; sizes:", n_seen, gpcs.size());
  for (auto &g : gpcs) printf(" %zu", g.size());
  printf("\n");
  for (size_t i = 0; i < gpcs.size(); ++i) {
    printf("# gpc %zu smids:", i);
    for (int s : gpcs[i]) printf(" %d", s);
    printf("\n");
  }
  return 0;
}
