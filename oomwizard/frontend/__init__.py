"""What both frontends share and neither owns: where answers come from, how a fix is checked.

Free of any UI import, so plain mode can use it without loading Textual.
"""
