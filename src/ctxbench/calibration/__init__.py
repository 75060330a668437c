"""ctxbench.calibration: simulated studies that measure each gate's error rate and coverage."""

from ctxbench.calibration.core import CalibrationRow, Kind, Scenario, run_scenario, run_scenarios

__all__ = ["CalibrationRow", "Kind", "Scenario", "run_scenario", "run_scenarios"]
