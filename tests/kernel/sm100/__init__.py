"""Blackwell GEMM tests: the arch is stated here once; conftest.py makes it the DSL's default too."""

ARCH = "sm_100a"
