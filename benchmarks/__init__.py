"""Benchmarks and peer adapters (Pinocchio, toppra), outside the library: `toppra-app bench` runs them.
They need the test extras (pip install -e ".[test]")."""
