"""Python run before a command (sitecustomize-style): any network attempt is recorded and refused.

Shared by the no-network suite and the offline-kit test, so both block the network the same way.
"""

BLOCK = """
import socket, sys
def _refuse(*a, **k):
    sys.stderr.write("NETWORK ATTEMPT\\n")
    raise OSError("network blocked")
class _NoSocket(socket.socket):
    def __init__(self, family=-1, *a, **k):
        if family in (socket.AF_INET, socket.AF_INET6, -1):
            _refuse()
        super().__init__(family, *a, **k)
socket.socket = _NoSocket
socket.create_connection = _refuse
socket.getaddrinfo = _refuse
"""
