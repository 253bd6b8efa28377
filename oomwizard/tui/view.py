"""What a screen may see of the wizard and ask of it: :class:`Wizard`, and the states it reads.

Screens get the app typed as this protocol (``WizardScreen.wizard``), not as ``WizardApp``: they read
the state through read-only properties and change it only through the requests listed here, so the
session, the facts' layers and the workers stay the app's own. Screens import this module, never
``app.py``, so the app can import its screens without a cycle. mypy checks that ``WizardApp``
provides all of it (``app.py``, ``_provides_the_view``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..engine import Answer, Ask, Done
    from ..facts.model import Fact, FactSet
    from ..frontend.inputs import MachineResult
    from ..kb.model import KnowledgeBase
    from ..logs.model import Diagnosis


@dataclass
class MachineState:
    """Where machine detection stands: ``idle``, ``running``, ``done`` or ``failed``."""

    status: str = "idle"
    result: MachineResult | None = None
    error: str | None = None


@dataclass
class LogState:
    status: str = "idle"
    """``idle``, ``reading``, ``done`` or ``failed``."""
    what: str = ""
    diagnosis: Diagnosis | None = None
    error: str | None = None
    note: str = ""
    """What reading is waiting for (watching a log grow)."""


class Wizard(Protocol):
    """The app as its screens see it."""

    # --- reading -----------------------------------------------------------------------------

    @property
    def lang(self) -> str: ...

    def t(self, key: str, **fmt: object) -> str: ...

    @property
    def kb(self) -> KnowledgeBase: ...

    @property
    def machine(self) -> MachineState: ...

    @property
    def log_state(self) -> LogState: ...

    @property
    def facts(self) -> FactSet:
        """Every fact the walk sees (machine, log, the operator's), with the alternatives."""
        ...

    @property
    def answers(self) -> Mapping[str, Answer]:
        """The answers given so far, by question id."""
        ...

    @property
    def resumable(self) -> Any:
        """The last unfinished walk, offered on the welcome screen (None when there is none)."""
        ...

    def has_logs(self) -> bool:
        """Whether a log was given (or the demo's is used)."""
        ...

    def step(self) -> Ask | Done:
        """Where the walk stands: the next question, or the fix."""
        ...

    def answered(self) -> bool:
        """Whether any question was answered (Back on the first question leaves the questions)."""
        ...

    def scenario_text(self, sid: str) -> tuple[Any, Any] | None: ...

    def can_watch(self) -> bool: ...

    # --- requests ----------------------------------------------------------------------------

    def answer(self, question: str, value: str) -> Ask | Done: ...

    def accept(self) -> Ask | Done:
        """Take the current suggestion."""
        ...

    def step_back(self) -> Ask | Done: ...

    def previous(self, question: str) -> str | None:
        """The user's own answer to this question that Back took away (shown again, not kept)."""
        ...

    def choose_scenario(self, scenario: str | None) -> None: ...

    def override_fact(self, name: str, raw: str) -> Fact: ...

    def open_questions(self) -> None: ...

    def show_step(self, step: Ask | Done) -> None: ...

    def leave_diagnosis(self) -> None: ...

    def read_logs(self, paths: list[str]) -> None: ...

    def read_pasted(self, text: str) -> None: ...

    def watch_log(self) -> None: ...

    def start_machine(self) -> None: ...

    def start_demo(self) -> None: ...

    def leave_demo(self) -> None:
        """Back to the welcome screen from the demo: this machine's own facts again."""
        ...

    def resume_last(self) -> None: ...

    def copy_text(self, text: str, on_tmux: Callable[[bool], None] | None = None) -> str: ...

    def saved(self, path: str) -> None:
        """A file was written for the operator: named again after the screen is restored."""
        ...

    def from_thread(self, callback: Callable[..., object], *args: object) -> None:
        """From a worker thread: call ``callback`` on the screen's thread (nothing once closing)."""
        ...
