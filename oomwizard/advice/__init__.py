"""Advice: the numbers computed for this machine and the commands built from them.

Between the readers (facts, logs, kb) and the outputs (report): it turns facts into values and
a leaf's fix templates into commands, and imports no output format and no frontend.
"""
