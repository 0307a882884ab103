"""Time-optimal path parameterisation with full rigid-body dynamics (convex, cvxpy)."""
