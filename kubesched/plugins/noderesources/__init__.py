"""NodeResourcesFit and NodeResourcesBalancedAllocation, and the scorer they share."""
