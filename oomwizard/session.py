"""One walk through the tree, as every interactive frontend drives it.

Holds the facts (machine, log, the user's overrides) and the answers given so far, and asks the
pure engine where that leads. Frontends call :meth:`Session.current` to know what to show and
:meth:`answer`, :meth:`accept`, :meth:`back` or :meth:`override` when the user acts. Facts that
arrive late (detection runs in the background) are merged with :meth:`add_facts`; answers already
given are kept, suggestions for the questions still ahead update.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .engine import Answer, Ask, Done, walk
from .facts.catalog import coerce
from .facts.model import Fact, FactSet
from .kb.model import KnowledgeBase


@dataclass
class Session:
    kb: KnowledgeBase
    facts: FactSet = field(default_factory=FactSet)
    lang: str = "en"
    answers: dict[str, Answer] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    """Question ids in the order they were answered, for :meth:`back`."""
    undone: dict[str, str] = field(default_factory=dict)
    """The user's own answers that Back took away, by question: shown again when the walk returns
    there, so stepping back to look does not lose what was typed or picked."""
    on_change: Callable[[], None] | None = field(default=None, repr=False, compare=False)
    """Called after every answer, step back, restart and correction (the walk is kept on disk)."""

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    def current(self) -> Ask | Done:
        return walk(self.kb, self.facts, self.answers, lang=self.lang)

    def finish(self) -> Ask | Done:
        """Accept every suggestion from here on; stop at the first question nobody can answer."""
        return walk(self.kb, self.facts, self.answers, auto_accept=True, lang=self.lang)

    def answer(self, question_id: str, value: str, source: str = "answered") -> Ask | Done:
        self.answers[question_id] = Answer(value, source)
        self.undone.pop(question_id, None)
        if question_id in self.order:
            self.order.remove(question_id)
        self.order.append(question_id)
        self._prune()
        self._changed()
        return self.current()

    def accept(self) -> Ask | Done:
        """Take the current question's suggestion (what Enter does)."""
        step = self.current()
        if isinstance(step, Ask) and step.suggestion is not None:
            return self.answer(step.question.id, step.suggestion.answer, step.suggestion.source)
        return step

    def back(self) -> Ask | Done:
        if self.order:
            qid = self.order.pop()
            gone = self.answers.pop(qid, None)
            if gone is not None and gone.source == "answered":
                self.undone[qid] = gone.value
            self._changed()
        return self.current()

    def previous(self, question_id: str) -> str | None:
        """The user's own answer to this question before Back took it away, if any."""
        return self.undone.get(question_id)

    def restart(self) -> Ask | Done:
        self.answers.clear()
        self.order.clear()
        self.undone.clear()
        self._changed()
        return self.current()

    def add_facts(self, facts: FactSet) -> Ask | Done:
        """Facts learnt later (a late detection) join the ones known; the answers stay."""
        self.facts.update(facts)
        return self.current()

    def replace_facts(self, facts: FactSet) -> None:
        """All facts anew (another log read, a machine replayed): what the old ones said is gone,
        the answers stay and the walk continues from where the new facts lead."""
        self.facts = facts

    def override(self, name: str, raw: str) -> Fact:
        """The user corrects a fact; raises ``FactValueError`` for a value of the wrong type."""
        value = coerce(name, raw)
        fact = Fact(name, value, "answered", kind="answered")
        self.facts.add(fact)
        # An answer given to a question about this fact would otherwise keep the old route: it is
        # answered again from the new value where that suggests an answer, so the answers after it
        # (still on the path) are kept rather than forgotten with it.
        stale = {q.id for q in self.kb.questions.values() if q.fact == name and q.id in self.answers}
        for qid in stale:
            self.answers.pop(qid)
        for _ in range(len(stale)):
            step = self.current()
            if not (isinstance(step, Ask) and step.question.id in stale and step.suggestion is not None):
                break
            self.answers[step.question.id] = Answer(step.suggestion.answer, step.suggestion.source)
        for qid in stale - set(self.answers):
            if qid in self.order:
                self.order.remove(qid)
        self._prune()
        self._changed()
        return fact

    def _prune(self) -> None:
        """Forget answers to questions that are no longer on the path (a change earlier moved it)."""
        step = walk(self.kb, self.facts, self.answers, lang=self.lang)
        on_path = {s.question for s in step.path}
        if isinstance(step, Ask):
            on_path.add(step.question.id)
        for qid in list(self.answers):
            if qid not in on_path:
                self.answers.pop(qid)
                if qid in self.order:
                    self.order.remove(qid)
