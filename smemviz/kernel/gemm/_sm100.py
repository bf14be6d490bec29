"""A warp-specialised Blackwell (sm_100a) GEMM whose shared and tensor memory are smemviz plans.

Each CTA walks its share of the output tiles (``tile_m x tile_n``; one tile per CTA with
one accumulator buffer, persistent over the GPU's SMs with two) with six warps:

* warp 4, the loader: TMA loads of A and B k-tiles into the operand stages, paced by a
  ``PipelineTmaUmma`` whose full/empty mbarriers sit in the SMEM plan's barrier region;
* warp 5, the MMA warp: ``tcgen05.mma`` from the operand stages into an fp32 accumulator
  in tensor memory, one buffer per tile; a ``PipelineUmmaAsync`` (its mbarriers also from
  the plan) tells the epilogue when a buffer is complete and the MMA when it is free again;
* warps 0-3, the epilogue: TMEM -> registers (``tcgen05.ld``, warp ``w`` reads lanes
  ``32w..32w+31``), convert, registers -> the C staging buffer, TMA stores to global memory.

Every SMEM byte comes from :class:`~smemviz.SmemAllocator` (``allocate()``,
``get_as_type()``, ``assign_barrier_ptrs()``, ``tmem_ptr_view()``); the accumulators'
TMEM columns come from :class:`~smemviz.TmemAllocator`: warp 0 runs ``tcgen05.alloc`` of
the TMEM plan's ``tmem_alloc_columns`` into the plan's TMEM-pointer slot, then
relinquishes the allocation permit, and deallocates once the last tile is stored.
Accumulator buffer ``s`` starts at the TMEM plan's column offset of ``gemm.acc{s}``.

When the C staging buffer shares bytes with the operand stages (one tile per CTA), the
epilogue writes it only after the accumulator is complete: the MMA's commit arrives once
every ``tcgen05.mma`` has finished reading the operand stages, and every TMA load into
them has completed before its MMA was issued.

M, N and K need not be multiples of the tile: TMA loads fill out-of-bounds elements with
zeros and TMA stores clip them. Rows must be 16-byte multiples (the host pads otherwise).
"""

from __future__ import annotations

from typing import Any

import cutlass
import cutlass.cute as cute
import cutlass.utils.blackwell_helpers as sm100_utils
from cutlass import pipeline
from cutlass.cute.nvgpu import cpasync, tcgen05
from cutlass.pipeline import pipeline_init_arrive, pipeline_init_wait
from cutlass.tensor_utils import LayoutEnum

from ... import hardware
from ._base import GemmKernelBase, LayoutMismatchError
from ._layout import GemmLayout

__all__ = ["Sm100Gemm", "THREADS", "EPILOGUE_WARPS", "LOAD_WARP", "MMA_WARP", "LayoutMismatchError"]

EPILOGUE_WARPS = (0, 1, 2, 3)
LOAD_WARP = 4
MMA_WARP = 5
WARP = hardware.WARP_THREADS
THREADS = WARP * (len(EPILOGUE_WARPS) + 2)
EPILOGUE_THREADS = WARP * len(EPILOGUE_WARPS)
# named barriers (0 is __syncthreads)
TMEM_READY_BARRIER_ID = 1  # the epilogue warps and the MMA warp, after tcgen05.alloc
EPILOGUE_BARRIER_ID = 2  # the epilogue warps, around each TMA store


class Sm100Gemm(GemmKernelBase):
    """``C = A @ B^T`` for K-major A (m, k, l), K-major B (n, k, l), N-major C (m, n, l).

    ``max_ctas`` caps the persistent grid (the GPU's SM count) when the plan has two
    accumulator buffers; with one, every output tile gets its own CTA.
    """

    def __init__(self, layout: GemmLayout, max_ctas: int | None = None) -> None:
        cfg = layout.config
        if layout.tmem is None or not layout.accumulators or layout.acc_pipeline is None:
            raise ValueError(f"GEMM {cfg.label()}: the layout has no TMEM accumulators; build it for sm_100a")
        super().__init__(layout)
        self.acc_stages = cfg.acc_stages
        self.epi_tile_mn = cfg.epi_tile
        self.persistent = cfg.acc_stages > 1
        self.max_ctas = max_ctas if max_ctas is not None else hardware.sm_count(cfg.arch)
        self.alloc_columns = layout.tmem_plan.tmem_alloc_columns
        self.acc_columns = layout.acc_columns()
        self.acc_pipeline = layout.acc_pipeline

    # -- host side -------------------------------------------------------------

    def _check_accumulators(self, acc_one: Any) -> None:
        """One accumulator spans the plan's columns per buffer, and the buffers sit at the
        plan's column offsets (checked against the TMEM plan, not assumed)."""
        columns = cute.cosize(acc_one.layout) % (1 << hardware.TMEM_ADDRESS_LANE_SHIFT)
        spans = [acc.num_columns for acc in self.layout.accumulators]
        if any(columns != span for span in spans):
            raise LayoutMismatchError(
                f"an accumulator of the tiled MMA spans {columns} TMEM columns; the plan gives {spans}"
            )

    @cute.jit
    def __call__(self, a: cute.Tensor, b: cute.Tensor, c: cute.Tensor):
        ab_dtype = a.element_type
        c_dtype = c.element_type
        self.ab_dtype = ab_dtype
        self.c_dtype = c_dtype
        self.c_layout = LayoutEnum.from_tensor(c)
        tile_m, tile_n, tile_k = self.tile_mnk

        tiled_mma = sm100_utils.make_trivial_tiled_mma(
            ab_dtype,
            b.element_type,
            LayoutEnum.from_tensor(a).mma_major_mode(),
            LayoutEnum.from_tensor(b).mma_major_mode(),
            self.acc_dtype,
            tcgen05.CtaGroup.ONE,
            (tile_m, tile_n),
        )
        mma_tiler = (tile_m, tile_n, tile_k)
        a_staged = sm100_utils.make_smem_layout_a(tiled_mma, mma_tiler, ab_dtype, self.stages)
        b_staged = sm100_utils.make_smem_layout_b(tiled_mma, mma_tiler, ab_dtype, self.stages)
        epi_tile = sm100_utils.compute_epilogue_tile_shape(mma_tiler, False, self.c_layout, c_dtype)
        c_staged = sm100_utils.make_smem_layout_epi(c_dtype, self.c_layout, epi_tile, self.epi_stages)
        self._check_regions(ab_dtype, c_dtype, a_staged, b_staged, c_staged)

        a_one = cute.slice_(a_staged, (None, None, None, 0))
        b_one = cute.slice_(b_staged, (None, None, None, 0))
        load = cpasync.CopyBulkTensorTileG2SOp(tcgen05.CtaGroup.ONE)
        tma_a, gmem_a = cute.nvgpu.make_tiled_tma_atom_A(load, a, a_one, mma_tiler, tiled_mma)
        tma_b, gmem_b = cute.nvgpu.make_tiled_tma_atom_B(load, b, b_one, mma_tiler, tiled_mma)
        tma_c, gmem_c = cpasync.make_tiled_tma_atom(
            cpasync.CopyBulkTensorTileS2GOp(), c, cute.slice_(c_staged, (None, None, 0)), epi_tile
        )
        self.stage_bytes = cute.size_in_bytes(ab_dtype, a_one) + cute.size_in_bytes(ab_dtype, b_one)

        shape: Any = c.shape
        m, n, l = shape  # noqa: E741
        tiles = ((m + tile_m - 1) // tile_m) * ((n + tile_n - 1) // tile_n) * l
        grid = cutlass.min(tiles, self.max_ctas) if cutlass.const_expr(self.persistent) else tiles
        self.kernel(
            tiled_mma, tma_a, gmem_a, tma_b, gmem_b, tma_c, gmem_c, a_staged, b_staged, c_staged, epi_tile
        ).launch(grid=[grid, 1, 1], block=[THREADS, 1, 1], cluster=(1, 1, 1), min_blocks_per_mp=1)

    # -- device side -------------------------------------------------------------

    @cute.kernel
    def kernel(  # noqa: PLR0913 - a @cute.kernel takes each TMA atom and layout as its own argument
        self,
        tiled_mma: cute.TiledMma,
        tma_a: cute.CopyAtom,
        gmem_a: cute.Tensor,
        tma_b: cute.CopyAtom,
        gmem_b: cute.Tensor,
        tma_c: cute.CopyAtom,
        gmem_c: cute.Tensor,
        a_staged: cute.ComposedLayout,
        b_staged: cute.ComposedLayout,
        c_staged: cute.ComposedLayout,
        epi_tile: cute.Tile,
    ):
        tidx, _, _ = cute.arch.thread_idx()
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        bidx, _, _ = cute.arch.block_idx()
        grid_ctas, _, _ = cute.arch.grid_dim()
        if warp == LOAD_WARP:
            cpasync.prefetch_descriptor(tma_a)
            cpasync.prefetch_descriptor(tma_b)
            cpasync.prefetch_descriptor(tma_c)

        # -- shared memory: one array, laid out by the plan -----------------------
        self.allocator.allocate()
        self.allocator.assign_barrier_ptrs()
        slot = self.allocator.tmem_ptr_view()
        slot_ptr = cute.make_ptr(cutlass.Int32, slot.data_ptr().toint(), mem_space=cutlass.AddressSpace.smem)
        sA = self._staged_tensor(self.layout.a, self.ab_dtype, a_staged)
        sB = self._staged_tensor(self.layout.b, self.ab_dtype, b_staged)
        sC = self._staged_tensor(self.layout.c, self.c_dtype, c_staged)

        cta_layout_vmnk = cute.make_layout((1, 1, 1, 1))
        loads = pipeline.PipelineTmaUmma.create(
            barrier_storage=self.layout.mainloop.pipeline_config.barrier_ptr,
            num_stages=self.stages,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            tx_count=self.stage_bytes,
            cta_layout_vmnk=cta_layout_vmnk,
            defer_sync=True,
        )
        accs = pipeline.PipelineUmmaAsync.create(
            barrier_storage=self.acc_pipeline.pipeline_config.barrier_ptr,
            num_stages=self.acc_stages,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, EPILOGUE_THREADS),
            cta_layout_vmnk=cta_layout_vmnk,
            defer_sync=True,
        )
        pipeline_init_arrive(cluster_shape_mn=(1, 1), is_relaxed=True)

        # -- global tiles and their MMA / TMA partitions -----------------------------
        tile_mnk = self.tile_mnk
        gA = cute.local_tile(gmem_a, cute.slice_(tile_mnk, (None, 0, None)), (None, None, None))
        gB = cute.local_tile(gmem_b, cute.slice_(tile_mnk, (0, None, None)), (None, None, None))
        gC = cute.local_tile(gmem_c, cute.slice_(tile_mnk, (None, None, 0)), (None, None, None))
        thr_mma = tiled_mma.get_slice(0)
        tCgA = thr_mma.partition_A(gA)
        tCgB = thr_mma.partition_B(gB)
        tCgC = thr_mma.partition_C(gC)
        tAsA, tAgA = cpasync.tma_partition(
            tma_a, 0, cute.make_layout(1), cute.group_modes(sA, 0, 3), cute.group_modes(tCgA, 0, 3)
        )
        tBsB, tBgB = cpasync.tma_partition(
            tma_b, 0, cute.make_layout(1), cute.group_modes(sB, 0, 3), cute.group_modes(tCgB, 0, 3)
        )
        tCrA = tiled_mma.make_fragment_A(sA)
        tCrB = tiled_mma.make_fragment_B(sB)
        acc_shape = tiled_mma.partition_shape_C(tile_mnk[:2])
        acc_one = tiled_mma.make_fragment_C(acc_shape)
        self._check_accumulators(acc_one)
        k_tiles = cute.size(gA, mode=[3])
        tiles_m = cute.size(gC, mode=[2])
        tiles_n = cute.size(gC, mode=[3])
        tiles = tiles_m * tiles_n * cute.size(gC, mode=[4])
        pipeline_init_wait(cluster_shape_mn=(1, 1))

        tmem_ready = pipeline.NamedBarrier(barrier_id=TMEM_READY_BARRIER_ID, num_threads=EPILOGUE_THREADS + WARP)
        # the end of this CTA's tile loop: persistent, every grid_ctas-th tile from its own;
        # else the grid has a CTA per tile and the bound itself says one tile, which an aliased
        # C staging buffer relies on (no next tile's operands load over it)
        last_tile = tiles if cutlass.const_expr(self.persistent) else bidx + 1

        if warp == LOAD_WARP:
            # -- loader --------------------------------------------------------------------
            producer, _ = loads.make_participants()
            for tile in cutlass.range(bidx, last_tile, grid_ctas, unroll=1):
                tm, tn, tl = self._tile_coord(tile, tiles_m, tiles_n)
                a_tiles = tAgA[(None, tm, None, tl)]
                b_tiles = tBgB[(None, tn, None, tl)]
                for _k in cutlass.range(k_tiles, unroll=1):
                    stage = producer.acquire_and_advance()
                    cute.copy(tma_a, a_tiles[(None, stage.count)], tAsA[(None, stage.index)], tma_bar_ptr=stage.barrier)
                    cute.copy(tma_b, b_tiles[(None, stage.count)], tBsB[(None, stage.index)], tma_bar_ptr=stage.barrier)
                producer.reset()
            producer.tail()

        if warp == MMA_WARP:
            # -- MMA -----------------------------------------------------------------------
            _, consumer = loads.make_participants()
            tmem_ready.arrive_and_wait()
            tmem_base = cute.arch.retrieve_tmem_ptr(self.acc_dtype, 16, slot_ptr)
            acc_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, self.acc_stages)
            k_blocks = cute.size(tCrA, mode=[2])
            for _tile in cutlass.range(bidx, last_tile, grid_ctas, unroll=1):
                acc = self._accumulator(tmem_base, acc_one, acc_state.index)
                accs.producer_acquire(acc_state)
                tiled_mma.set(tcgen05.Field.ACCUMULATE, False)
                for _k in cutlass.range(k_tiles, unroll=1):
                    stage = consumer.wait_and_advance()
                    for kb in cutlass.range_constexpr(k_blocks):
                        cute.gemm(
                            tiled_mma,
                            acc,
                            tCrA[(None, None, kb, stage.index)],
                            tCrB[(None, None, kb, stage.index)],
                            acc,
                        )
                        tiled_mma.set(tcgen05.Field.ACCUMULATE, True)
                    # tcgen05.commit: the stage is released once these MMAs have read it
                    stage.release()
                consumer.reset()
                accs.producer_commit(acc_state)
                acc_state.advance()
            accs.producer_tail(acc_state)

        if warp < LOAD_WARP:
            # -- epilogue --------------------------------------------------------------------
            if warp == EPILOGUE_WARPS[0]:
                cute.arch.alloc_tmem(self.alloc_columns, slot_ptr)
                # this CTA allocates nothing more: a CTA waiting on this SM may allocate now
                cute.arch.relinquish_tmem_alloc_permit()
            tmem_ready.arrive_and_wait()
            tmem_base = cute.arch.retrieve_tmem_ptr(self.acc_dtype, 16, slot_ptr)
            self._epilogue(
                tidx,
                warp,
                bidx,
                grid_ctas,
                last_tile,
                tiles_m,
                tiles_n,
                tmem_base,
                acc_one,
                accs,
                tma_c,
                sC,
                tCgC,
                epi_tile,
            )
            epilogue_barrier = pipeline.NamedBarrier(barrier_id=EPILOGUE_BARRIER_ID, num_threads=EPILOGUE_THREADS)
            # every epilogue warp has read its last accumulator: free the columns
            epilogue_barrier.arrive_and_wait()
            if warp == EPILOGUE_WARPS[0]:
                cute.arch.dealloc_tmem(tmem_base, self.alloc_columns)

    @cute.jit
    def _tile_coord(self, tile: cutlass.Int32, tiles_m: cutlass.Int32, tiles_n: cutlass.Int32):
        """Output tile ``tile`` (linear, M fastest) as (m, n, l) tile indices."""
        tm = tile % tiles_m
        tn = (tile // tiles_m) % tiles_n
        tl = tile // (tiles_m * tiles_n)
        return tm, tn, tl

    @cute.jit
    def _accumulator(self, tmem_base: cute.Pointer, acc_one: cute.Tensor, index: cutlass.Int32) -> cute.Tensor:
        """Accumulator buffer ``index`` at the TMEM plan's column offset of ``gemm.acc{index}``."""
        column = cutlass.Int32(self.acc_columns[0])
        if cutlass.const_expr(len(self.acc_columns) > 1):
            if index == 1:
                column = cutlass.Int32(self.acc_columns[1])
        return cute.make_tensor(tmem_base + column, acc_one.layout)

    @cute.jit
    def _epilogue(  # noqa: PLR0913 - the epilogue's tensors, traced inline into the kernel
        self,
        tidx: cutlass.Int32,
        warp: cutlass.Int32,
        bidx: cutlass.Int32,
        grid_ctas: cutlass.Int32,
        last_tile: cutlass.Int32,
        tiles_m: cutlass.Int32,
        tiles_n: cutlass.Int32,
        tmem_base: cute.Pointer,
        acc_one: cute.Tensor,
        accs: Any,
        tma_c: cute.CopyAtom,
        sC: cute.Tensor,
        tCgC: cute.Tensor,
        epi_tile: cute.Tile,
    ):
        """Each finished accumulator: TMEM -> registers -> C staging -> TMA store, one
        ``epi_tile`` at a time, C staging buffers used round-robin across tiles."""
        c_dtype = self.c_dtype
        # TMEM -> registers
        load_atom = sm100_utils.get_tmem_load_op(self.tile_mnk, self.c_layout, c_dtype, self.acc_dtype, epi_tile, False)
        acc0 = cute.make_tensor(tmem_base, acc_one.layout)
        acc0_tile: Any = acc0[((None, None), 0, 0)]
        acc_epi: Any = cute.flat_divide(acc0_tile, epi_tile)
        t2r = tcgen05.make_tmem_copy(load_atom, acc_epi[(None, None, 0, 0)])
        thr_t2r = t2r.get_slice(tidx)
        gC_tiles: Any = tCgC[((None, None), 0, 0, None, None, None)]
        gC_epi = cute.flat_divide(gC_tiles, epi_tile)
        tTR_gC = thr_t2r.partition_D(gC_epi)
        frag_acc = cute.make_rmem_tensor(tTR_gC[(None, None, None, 0, 0, 0, 0, 0)].shape, self.acc_dtype)
        frag_out = cute.make_rmem_tensor(frag_acc.shape, c_dtype)
        # registers -> C staging
        store_atom = sm100_utils.get_smem_store_op(self.c_layout, c_dtype, self.acc_dtype, t2r)
        r2s = cute.make_tiled_copy_D(store_atom, t2r)
        thr_r2s = r2s.get_slice(tidx)
        tRS_sC = thr_r2s.partition_D(sC)
        tRS_out = r2s.retile(frag_out)
        # C staging -> global
        bSG_sC, bSG_gC = cpasync.tma_partition(
            tma_c, 0, cute.make_layout(1), cute.group_modes(sC, 0, 2), cute.group_modes(gC_epi, 0, 2)
        )
        stores = pipeline.PipelineTmaStore.create(
            num_stages=self.epi_stages,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, EPILOGUE_THREADS),
        )
        epilogue_barrier = pipeline.NamedBarrier(barrier_id=EPILOGUE_BARRIER_ID, num_threads=EPILOGUE_THREADS)
        acc_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.acc_stages)
        subtiles = cute.size(acc_epi, mode=[2]) * cute.size(acc_epi, mode=[3])
        written = cutlass.Int32(0)
        for tile in cutlass.range(bidx, last_tile, grid_ctas, unroll=1):
            tm, tn, tl = self._tile_coord(tile, tiles_m, tiles_n)
            acc = self._accumulator(tmem_base, acc_one, acc_state.index)
            acc_tile: Any = acc[((None, None), 0, 0)]
            tTR_acc = thr_t2r.partition_S(cute.flat_divide(acc_tile, epi_tile))
            tTR_acc = cute.group_modes(tTR_acc, 3, cute.rank(tTR_acc))
            gC_tile = cute.group_modes(bSG_gC[(None, None, None, tm, tn, tl)], 1, 3)
            # the accumulator is complete: every MMA of this tile has also finished reading
            # the operand stages, which an aliased C staging buffer overlays
            accs.consumer_wait(acc_state)
            for e in cutlass.range(subtiles, unroll=1):
                cute.copy(t2r, tTR_acc[(None, None, None, e)], frag_acc)
                # tcgen05.ld is asynchronous: wait for the registers before reading them
                cute.arch.fence_view_async_tmem_load()
                tRS_out.store(r2s.retile(frag_acc).load().to(c_dtype))
                buf = (written + e) % self.epi_stages
                cute.copy(r2s, tRS_out, tRS_sC[(None, None, None, buf)])
                # st.shared writes through the generic proxy; TMA reads through the async one
                cute.arch.fence_proxy("async.shared", space="cta")
                epilogue_barrier.arrive_and_wait()
                if warp == EPILOGUE_WARPS[0]:
                    cute.copy(tma_c, bSG_sC[(None, buf)], gC_tile[(None, e)])
                    stores.producer_commit()
                    stores.producer_acquire()
                epilogue_barrier.arrive_and_wait()
            # the accumulator's columns are read: the MMA may refill them
            accs.consumer_release(acc_state)
            acc_state.advance()
            written += subtiles
        stores.producer_tail()
