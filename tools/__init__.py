"""What the tests, the benchmarks and the scripts share: the Chromium they drive and the
JupyterLab they drive it through. Nothing here is installed with the package.

Everything runs from the repository root, which is then on ``sys.path``: pytest (its
root conftest), ``python -m benchmarks.NAME`` and ``python -m scripts.NAME``; no module
inserts a path of its own.
"""
