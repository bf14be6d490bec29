"""Kernel bridge: trace, compile and launch CuTe DSL kernels from a layout.

Everything here imports the CuTe DSL (``nvidia-cutlass-dsl``) lazily.
"""
