"""Measuring the product: the DABench benchmark, the recorded-model suite, and compiling the agents against a split.

The modules import DSPy and the Analyst when used, never at ``import auto_analyst``.
"""

__all__: list[str] = []
