"""What the app tells its screens when something arrives late: Textual messages, one per kind.

Machine detection, reading a log and the operator's corrections happen while a screen is up. The
app posts one of these to every screen on the stack (see ``WizardApp.tell``); a screen that
shows that state handles it (``on_machine_detected`` …) and reads the new state through
:class:`~.view.Wizard`. They do not bubble: each screen hears its own copy, the app none.
"""

from __future__ import annotations

from textual.message import Message


class MachineDetected(Message, bubble=False):
    """Machine detection started, finished or failed (``Wizard.machine`` says which)."""


class LogRead(Message, bubble=False):
    """A log began to be read, was read and diagnosed, or could not be read (``Wizard.log``)."""


class FactsChanged(Message, bubble=False):
    """The facts the walk sees changed: a machine or a log arrived, or the operator corrected one."""


class ResumeOffered(Message, bubble=False):
    """An unfinished walk was found after the first frame (``Wizard.resumable``)."""
