"""Apps with fixed inputs, for snapshot and Pilot tests: the fixture knowledge base and stand-in sources."""
