"""The support bundle: one file with everything a diagnosis used, that replays on another machine.

``report`` writes it (:mod:`.build`, :mod:`.formats`), :mod:`.identity` replaces who and where
it came from with stable placeholders, :mod:`.replay` reads one back, and :mod:`.state` keeps an
unfinished walk so a dropped session can be resumed.
"""
