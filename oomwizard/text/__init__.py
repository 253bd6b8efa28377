"""Text safe to show: terminal-safe characters, secrets redacted, the output boundary.

Imports nothing else of oomwizard, so the readers (facts, logs) and every output can use it.
"""
