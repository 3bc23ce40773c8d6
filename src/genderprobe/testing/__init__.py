"""Real, small instruments for tests and benchmarks (local servers, tiny models)."""
