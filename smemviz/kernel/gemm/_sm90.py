"""A warp-specialised Hopper (sm_90a) GEMM whose shared memory is one smemviz plan.

One CTA computes one ``tile_m x tile_n`` tile of C with three warpgroups:

* warpgroup 0, the producer: its first warp issues TMA loads of A and B k-tiles
  into the operand stages (B multicast to both CTAs of a 2x1 cluster), paced by
  a ``cutlass.pipeline.PipelineTmaAsync`` whose full/empty mbarriers sit in the
  allocator's barrier region;
* warpgroups 1 and 2, the consumers: WGMMA on 64-row halves of the tile from the
  operand stages into fp32 registers, then the epilogue: registers to the C
  staging buffer (``stmatrix``), TMA stores to global memory.

Every SMEM byte comes from :class:`~smemviz.SmemAllocator`: ``allocate()`` emits
the one array, ``get_as_type()`` gives each region, ``assign_barrier_ptrs()``
places the pipeline's mbarriers. When the plan puts the C staging buffer in an
alias group over the operand stages, the consumers meet at a named barrier
after their last WGMMA before the first C write: by then every operand stage
has been filled (its full barrier completed) and read.

M, N and K need not be multiples of the tile: TMA loads fill out-of-bounds
elements with zeros and TMA stores clip them. Rows must be 16-byte multiples
(N and K multiples of 8 for 16-bit types; the host wrapper pads otherwise).
"""

from __future__ import annotations

from typing import Any

import cutlass
import cutlass.cute as cute
import cutlass.utils.hopper_helpers as sm90_utils
from cutlass import pipeline
from cutlass.pipeline import pipeline_init_arrive, pipeline_init_wait
from cutlass.tensor_utils import LayoutEnum

from ... import hardware
from ._base import GemmKernelBase
from ._layout import CONSUMER_WARPGROUPS, GemmLayout

__all__ = ["Sm90Gemm", "THREADS", "RASTER_GROUP_M"]

WARPGROUP = hardware.WARPGROUP_THREADS
THREADS = (1 + CONSUMER_WARPGROUPS) * WARPGROUP
PRODUCER_REGISTERS = 40
CONSUMER_REGISTERS = 232
EPILOGUE_BARRIER_ID = 1
# Test-only mutations (``Sm90Gemm(layout, _test_mutation=...)``), each a deliberate ordering bug for
# the ordering check's GPU proof; never set outside tests and benchmarks/ordering_h200.py. Off
# (``None``, the default) the traced kernel, and so its PTX, is the same as without the keyword.
#   "no-epilogue-barrier": drop the consumers' named barrier before the first C write over the A
#       stages (a warpgroup's stmatrix may overwrite A rows the other's WGMMA still reads);
#   "empty-count+1": the mainloop's empty barriers expect one arrival more than the consumer warps
#       give (the producer hangs on its first refill of a stage).
_TEST_MUTATIONS = ("no-epilogue-barrier", "empty-count+1")
# clusters are walked in bands of this many cluster rows, so a wave of CTAs
# reuses the same A rows and B columns from L2
RASTER_GROUP_M = 8


# a config's layout atom -> the WGMMA layout atom of a K-major (row-contiguous) buffer
_K_MAJOR_ATOMS = {"interleaved": "K_INTER", "32B": "K_SW32", "64B": "K_SW64", "128B": "K_SW128"}


def _k_major_staged(atom_name: str, dtype: Any, shape: tuple[int, int], stages: int) -> Any:
    """``stages`` row-major ``shape`` tiles from the DSL's layout atom ``atom_name``, or, for
    "none", plain unswizzled rows (C staging only: WGMMA cannot read those)."""
    if atom_name == "none":
        rows, cols = shape
        plain = cute.make_layout((rows, cols, stages), stride=(cols, 1, rows * cols))
        return cute.make_composed_layout(cute.make_swizzle(0, 4, 3), 0, plain)
    kind = getattr(cute.nvgpu.warpgroup.SmemLayoutAtomKind, _K_MAJOR_ATOMS[atom_name])
    atom = cute.nvgpu.warpgroup.make_smem_layout_atom(kind, dtype)
    return cute.tile_to_shape(atom, (*shape, stages), order=(0, 1, 2))


class Sm90Gemm(GemmKernelBase):
    """``C = A @ B^T`` for K-major A (m, k, l), K-major B (n, k, l), N-major C (m, n, l)."""

    def __init__(self, layout: GemmLayout, *, _test_mutation: str | None = None) -> None:
        super().__init__(layout)
        if _test_mutation is not None and _test_mutation not in _TEST_MUTATIONS:
            raise ValueError(f"unknown test mutation {_test_mutation!r}; one of {_TEST_MUTATIONS}")
        self._test_mutation = _test_mutation  # test-only: see _TEST_MUTATIONS
        cfg = layout.config
        self.cluster_mn = (cfg.cluster_m, cfg.cluster_n)
        self.epi_tile = cfg.epi_tile
        self.a_mcast = cfg.cluster_n > 1
        self.b_mcast = cfg.cluster_m > 1

    # -- host side -------------------------------------------------------------

    @cute.jit
    def __call__(self, a: cute.Tensor, b: cute.Tensor, c: cute.Tensor):
        ab_dtype = a.element_type
        c_dtype = c.element_type
        a_major = LayoutEnum.from_tensor(a)
        b_major = LayoutEnum.from_tensor(b)
        c_major = LayoutEnum.from_tensor(c)
        self.c_major = c_major
        self.ab_dtype = ab_dtype
        self.c_dtype = c_dtype
        tile_m, tile_n, _ = self.tile_mnk

        tiled_mma = self.make_tiled_mma(ab_dtype, a_major, b_major)
        a_staged, b_staged, c_staged = self._staged_layouts(a_major, b_major, c_major, ab_dtype, c_dtype)
        self._check_regions(ab_dtype, c_dtype, a_staged, b_staged, c_staged)

        load_a = (
            cute.nvgpu.cpasync.CopyBulkTensorTileG2SMulticastOp()
            if self.a_mcast
            else cute.nvgpu.cpasync.CopyBulkTensorTileG2SOp()
        )
        load_b = (
            cute.nvgpu.cpasync.CopyBulkTensorTileG2SMulticastOp()
            if self.b_mcast
            else cute.nvgpu.cpasync.CopyBulkTensorTileG2SOp()
        )
        tma_a, gmem_a = cute.nvgpu.cpasync.make_tiled_tma_atom(
            load_a,
            a,
            cute.slice_(a_staged, (None, None, 0)),
            (self.tile_mnk[0], self.tile_mnk[2]),
            num_multicast=self.cluster_mn[1],
        )
        tma_b, gmem_b = cute.nvgpu.cpasync.make_tiled_tma_atom(
            load_b,
            b,
            cute.slice_(b_staged, (None, None, 0)),
            (self.tile_mnk[1], self.tile_mnk[2]),
            num_multicast=self.cluster_mn[0],
        )
        tma_c, gmem_c = cute.nvgpu.cpasync.make_tiled_tma_atom(
            cute.nvgpu.cpasync.CopyBulkTensorTileS2GOp(),
            c,
            cute.slice_(c_staged, (None, None, 0)),
            self.epi_tile,
        )

        shape: Any = c.shape
        m, n, l = shape  # noqa: E741
        cluster_m = self.cluster_mn[0]
        tiles_m = (m + tile_m - 1) // tile_m
        grid_m = (tiles_m + cluster_m - 1) // cluster_m * cluster_m
        grid_n = (n + tile_n - 1) // tile_n
        self.kernel(tma_a, gmem_a, tma_b, gmem_b, tma_c, gmem_c, tiled_mma, a_staged, b_staged, c_staged).launch(
            grid=[grid_m, grid_n, l],
            block=[THREADS, 1, 1],
            cluster=(*self.cluster_mn, 1),
            min_blocks_per_mp=1,
        )

    def make_tiled_mma(self, ab_dtype: Any, a_major: Any, b_major: Any) -> Any:
        """The consumers' WGMMA: two warpgroups, each 64 rows of the tile."""
        return sm90_utils.make_trivial_tiled_mma(
            ab_dtype,
            ab_dtype,
            a_major.sm90_mma_major_mode(),
            b_major.sm90_mma_major_mode(),
            self.acc_dtype,
            (CONSUMER_WARPGROUPS, 1, 1),
            tiler_mn=(64, self.tile_mnk[1]),
        )

    def make_epilogue_copy(self, tiled_mma: Any, c_major: Any, c_dtype: Any) -> Any:
        """Registers to C staging: ``stmatrix.x4`` tiled over the accumulator's layout (the
        lanes' row addresses the bank prediction assumes; a CPU test traces them)."""
        store_atom = sm90_utils.sm90_get_smem_store_op(c_major, elem_ty_d=c_dtype, elem_ty_acc=self.acc_dtype)
        stmatrix = cute.make_copy_atom(cute.nvgpu.warp.StMatrix8x8x16bOp(c_major.is_m_major_c(), 4), c_dtype)
        return cute.make_tiled_copy_S(store_atom, cute.make_tiled_copy_C_atom(stmatrix, tiled_mma))

    def _staged_layouts(self, a_major: Any, b_major: Any, c_major: Any, ab_dtype: Any, c_dtype: Any) -> tuple:
        """A, B and C staging as staged CuTe layouts: the DSL's own pick for "auto", else the
        config's swizzle mode (TMA, WGMMA and stmatrix are all built from these layouts)."""
        cfg = self.layout.config
        tile_m, tile_n, tile_k = self.tile_mnk
        if cfg.ab_swizzle == "auto":
            a_staged = sm90_utils.make_smem_layout_a(a_major, self.tile_mnk, ab_dtype, self.stages)
            b_staged = sm90_utils.make_smem_layout_b(b_major, self.tile_mnk, ab_dtype, self.stages)
        else:
            a_staged = _k_major_staged(cfg.ab_atom, ab_dtype, (tile_m, tile_k), self.stages)
            b_staged = _k_major_staged(cfg.ab_atom, ab_dtype, (tile_n, tile_k), self.stages)
        if cfg.c_swizzle == "auto":
            c_staged = sm90_utils.make_smem_layout_epi(c_dtype, c_major, self.epi_tile, self.epi_stages)
        else:
            c_staged = _k_major_staged(cfg.c_atom, c_dtype, self.epi_tile, self.epi_stages)
        return a_staged, b_staged, c_staged

    # -- device side -------------------------------------------------------------

    def _tile_coord(self):
        """This CTA's (m, n) tile: clusters walked in bands of RASTER_GROUP_M cluster rows."""
        bidx, bidy, _ = cute.arch.block_idx()
        gdimx, gdimy, _ = cute.arch.grid_dim()
        cluster_m = self.cluster_mn[0]
        clusters_m = gdimx // cluster_m
        linear = bidx // cluster_m + clusters_m * bidy
        band = RASTER_GROUP_M * gdimy
        first_m = (linear // band) * RASTER_GROUP_M
        rows = cutlass.min(clusters_m - first_m, RASTER_GROUP_M)
        within = linear % band
        cm = first_m + within % rows
        cn = within // rows
        return cm * cluster_m + bidx % cluster_m, cn

    @cute.kernel
    def kernel(  # noqa: PLR0913 - a @cute.kernel takes each TMA atom and layout as its own argument
        self,
        tma_a: cute.CopyAtom,
        gmem_a: cute.Tensor,
        tma_b: cute.CopyAtom,
        gmem_b: cute.Tensor,
        tma_c: cute.CopyAtom,
        gmem_c: cute.Tensor,
        tiled_mma: cute.TiledMma,
        a_staged: cute.ComposedLayout,
        b_staged: cute.ComposedLayout,
        c_staged: cute.ComposedLayout,
    ):
        tidx, _, _ = cute.arch.thread_idx()
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        warpgroup = cute.arch.make_warp_uniform(tidx // WARPGROUP)
        _, _, bidz = cute.arch.block_idx()
        if warp == 0:
            cute.nvgpu.cpasync.prefetch_descriptor(tma_a)
            cute.nvgpu.cpasync.prefetch_descriptor(tma_b)
            cute.nvgpu.cpasync.prefetch_descriptor(tma_c)

        ab_dtype = self.ab_dtype
        c_dtype = self.c_dtype
        cta_layout = cute.make_layout((*self.cluster_mn, 1))
        cta_rank = cute.arch.make_warp_uniform(cute.arch.block_idx_in_cluster())
        cluster_coord = cta_layout.get_flat_coord(cta_rank)
        a_mask = cute.make_layout_image_mask(cta_layout, cluster_coord, mode=1) if self.a_mcast else 0
        b_mask = cute.make_layout_image_mask(cta_layout, cluster_coord, mode=0) if self.b_mcast else 0
        stage_bytes = cute.size_in_bytes(ab_dtype, cute.slice_(a_staged, (None, None, 0))) + cute.size_in_bytes(
            ab_dtype, cute.slice_(b_staged, (None, None, 0))
        )

        # -- shared memory: one array, laid out by the plan -----------------------
        self.allocator.allocate()
        self.allocator.assign_barrier_ptrs()
        barriers = self.layout.mainloop.pipeline_config.barrier_ptr
        sA = self._staged_tensor(self.layout.a, ab_dtype, a_staged)
        sB = self._staged_tensor(self.layout.b, ab_dtype, b_staged)
        sC = self._staged_tensor(self.layout.c, c_dtype, c_staged)

        mcast = self.cluster_mn[0] + self.cluster_mn[1] - 1
        extra_arrivals = 1 if cutlass.const_expr(self._test_mutation == "empty-count+1") else 0
        mainloop = pipeline.PipelineTmaAsync.create(
            barrier_storage=barriers,
            num_stages=self.stages,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            consumer_group=pipeline.CooperativeGroup(
                pipeline.Agent.Thread, mcast * CONSUMER_WARPGROUPS * WARPGROUP // 32 + extra_arrivals
            ),
            tx_count=stage_bytes,
            cta_layout_vmnk=cute.make_layout((1, *cta_layout.shape)),
            defer_sync=True,
        )
        pipeline_init_arrive(cluster_shape_mn=self.cluster_mn, is_relaxed=True)

        # -- global tiles and their TMA partitions ----------------------------------
        tile_m_idx, tile_n_idx = self._tile_coord()
        gA = cute.local_tile(gmem_a, cute.slice_(self.tile_mnk, (None, 0, None)), (None, None, None))
        gB = cute.local_tile(gmem_b, cute.slice_(self.tile_mnk, (0, None, None)), (None, None, None))
        gC = cute.local_tile(gmem_c, cute.slice_(self.tile_mnk, (None, None, 0)), (None, None, None))
        tAsA, tAgA = cute.nvgpu.cpasync.tma_partition(
            tma_a,
            cluster_coord[1],
            cute.make_layout(cute.slice_(cta_layout, (0, None, 0)).shape),
            cute.group_modes(sA, 0, 2),
            cute.group_modes(gA, 0, 2),
        )
        tBsB, tBgB = cute.nvgpu.cpasync.tma_partition(
            tma_b,
            cluster_coord[0],
            cute.make_layout(cute.slice_(cta_layout, (None, 0, 0)).shape),
            cute.group_modes(sB, 0, 2),
            cute.group_modes(gB, 0, 2),
        )
        k_tiles = cute.size(gA, mode=[3])
        pipeline_init_wait(cluster_shape_mn=self.cluster_mn)

        if warpgroup == 0:
            # -- producer ---------------------------------------------------------
            cute.arch.setmaxregister_decrease(PRODUCER_REGISTERS)
            if warp == 0:
                a_tiles = tAgA[(None, tile_m_idx, None, bidz)]
                b_tiles = tBgB[(None, tile_n_idx, None, bidz)]
                state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, self.stages)
                for _k in cutlass.range(k_tiles, unroll=1):
                    mainloop.producer_acquire(state)
                    full = mainloop.producer_get_barrier(state)
                    cute.copy(
                        tma_a,
                        a_tiles[(None, state.count)],
                        tAsA[(None, state.index)],
                        tma_bar_ptr=full,
                        mcast_mask=a_mask,
                    )
                    cute.copy(
                        tma_b,
                        b_tiles[(None, state.count)],
                        tBsB[(None, state.index)],
                        tma_bar_ptr=full,
                        mcast_mask=b_mask,
                    )
                    mainloop.producer_commit(state)
                    state.advance()
                mainloop.producer_tail(state)
        else:
            # -- consumers: mainloop ---------------------------------------------------
            cute.arch.setmaxregister_increase(CONSUMER_REGISTERS)
            ctid = tidx - WARPGROUP
            # WGMMA partitions the operands per warpgroup: slice by the warpgroup's first thread
            thr_mma = tiled_mma.get_slice((warpgroup - 1) * WARPGROUP)
            tCsA = thr_mma.partition_A(sA)
            tCsB = thr_mma.partition_B(sB)
            tCrA = tiled_mma.make_fragment_A(tCsA)
            tCrB = tiled_mma.make_fragment_B(tCsB)
            gC_tile = gC[(None, None, tile_m_idx, tile_n_idx, bidz)]
            acc = cute.make_rmem_tensor(thr_mma.partition_C(gC_tile).shape, self.acc_dtype)
            acc.fill(0.0)
            tiled_mma.set(cute.nvgpu.warpgroup.Field.ACCUMULATE, True)
            k_blocks = cute.size(tCrA, mode=[2])

            read = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.stages)
            release = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.stages)
            # first k-tile: issue, keep it in flight
            mainloop.consumer_wait(read)
            cute.nvgpu.warpgroup.fence()
            for kb in cutlass.range_constexpr(k_blocks):
                cute.gemm(tiled_mma, acc, tCrA[(None, None, kb, read.index)], tCrB[(None, None, kb, read.index)], acc)
            cute.nvgpu.warpgroup.commit_group()
            read.advance()
            for _k in cutlass.range(1, k_tiles, 1, unroll=1):
                mainloop.consumer_wait(read)
                cute.nvgpu.warpgroup.fence()
                for kb in cutlass.range_constexpr(k_blocks):
                    cute.gemm(
                        tiled_mma, acc, tCrA[(None, None, kb, read.index)], tCrB[(None, None, kb, read.index)], acc
                    )
                cute.nvgpu.warpgroup.commit_group()
                # the previous k-tile's WGMMAs are done: its stage can be refilled
                cute.nvgpu.warpgroup.wait_group(1)
                mainloop.consumer_release(release)
                release.advance()
                read.advance()
            cute.nvgpu.warpgroup.wait_group(0)
            mainloop.consumer_release(release)

            # -- consumers: epilogue ----------------------------------------------------
            epilogue_barrier = pipeline.NamedBarrier(
                barrier_id=EPILOGUE_BARRIER_ID, num_threads=CONSUMER_WARPGROUPS * WARPGROUP
            )
            if cutlass.const_expr(self.aliased and self._test_mutation != "no-epilogue-barrier"):
                # C staging overlays the operand stages: both warpgroups' WGMMAs must be done
                epilogue_barrier.arrive_and_wait()
            r2s = self.make_epilogue_copy(tiled_mma, self.c_major, c_dtype)
            thr_r2s = r2s.get_slice(ctid)
            tRS_sC = thr_r2s.partition_D(sC)
            tRS_acc = r2s.retile(acc)
            frag_shape = cute.shape(thr_r2s.partition_S(sC))[:3]
            frag_acc = cute.make_rmem_tensor(frag_shape, self.acc_dtype)
            frag_out = cute.make_rmem_tensor(frag_shape, c_dtype)
            frag_size = cute.size(frag_acc)

            gC_epi = cute.zipped_divide(gC_tile, self.epi_tile)
            bSG_sC, bSG_gC = cute.nvgpu.cpasync.tma_partition(
                tma_c, 0, cute.make_layout(1), cute.group_modes(sC, 0, 2), gC_epi
            )
            epi_count = cute.size(gC_epi, mode=[1])
            epi_grid = gC_epi.shape[1]
            epi_order = cute.make_layout(epi_grid, stride=(epi_grid[1], 1))
            stores = pipeline.PipelineTmaStore.create(
                num_stages=self.epi_stages,
                producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, CONSUMER_WARPGROUPS * WARPGROUP),
            )
            store_warp = WARPGROUP // 32
            for e in cutlass.range_constexpr(epi_count):
                for v in cutlass.range_constexpr(frag_size):
                    frag_acc[v] = tRS_acc[e * frag_size + v]
                frag_out.store(frag_acc.load().to(c_dtype))
                buf = e % self.epi_stages
                cute.copy(r2s, frag_out, tRS_sC[(None, None, None, buf)])
                # stmatrix writes through the generic proxy; TMA reads through the async one
                cute.arch.fence_proxy("async.shared", space="cta")
                epilogue_barrier.arrive_and_wait()
                if warp == store_warp:
                    cute.copy(tma_c, bSG_sC[(None, buf)], bSG_gC[(None, epi_order.get_hier_coord(e))])
                    stores.producer_commit()
                    stores.producer_acquire()
                epilogue_barrier.arrive_and_wait()
            if warp == store_warp:
                stores.producer_tail()

        if cutlass.const_expr(self.cluster_mn[0] * self.cluster_mn[1] > 1):
            # a peer may still arrive on our empty barriers: leave together
            cute.arch.cluster_arrive()
            cute.arch.cluster_wait()
