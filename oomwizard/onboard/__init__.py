"""Learning without a failure at hand: browse every scenario, the glossary, the memory budget, the tour."""
