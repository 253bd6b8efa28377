"""The offline HTML export: page writer (:mod:`.site`) and its one stylesheet (``style.css``)."""
