"""Objectives other than minimum time: the time–energy trade-off (`energy`) and the RMS-torque (thermal)
rating of a whole cycle (`thermal`). `energy` is a leaf the planner uses; `thermal` plans on top of it."""
