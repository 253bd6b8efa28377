"""Outputs: the leaf, the diagnosis, the machine report, the saved script, the exports.

The top of the core: it reads facts, logs, the knowledge base and the advice, and no frontend.
"""
