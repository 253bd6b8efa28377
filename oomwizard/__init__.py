"""oomwizard: walk an operator from a vLLM "CUDA out of memory" to the commands that fix it."""

__version__ = "0.1.0"
