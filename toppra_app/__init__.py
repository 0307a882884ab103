"""Time-optimal path parameterisation with full rigid-body dynamics (convex, cvxpy)."""

__all__ = ["JointPath", "plan_time_optimal", "TimeOptimalPlanner", "TimeOptimalPlan", "ControllerProfile"]

_LAZY = {"JointPath": "path", "plan_time_optimal": "planner", "TimeOptimalPlanner": "planner",
         "TimeOptimalPlan": "planner", "ControllerProfile": "controller"}


def __getattr__(name):
    # imported on first use, so `toppra_app` (and the CLI) start without loading cvxpy
    if name in _LAZY:
        import importlib
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'toppra_app' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + __all__)
