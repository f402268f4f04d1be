"""dlsim's exception types. C++ errors arrive as these (see bindings/bind_errors.cpp)."""
from __future__ import annotations

from typing import Optional

__all__ = ["ConfigError", "CalibrationError"]


class ConfigError(ValueError):
    """Bad input: a scenario (file, text or dict), an override, or an option.

    Attributes:
        file: the file the value came from ("<dict>" for a dict, "--set" for an override).
        line, column: 1-based position in the file, or None when unknown (always None for dicts).
        key_path: where in the scenario, e.g. ``"cluster.pools[0].capacity"`` ("" when global).
        message: what is wrong and what is allowed, without the location.
    """

    def __init__(self, text: str, file: str = "", line: Optional[int] = None, column: Optional[int] = None,
                 key_path: str = "", message: str = ""):
        super().__init__(text)
        self.file = file
        self.line = line
        self.column = column
        self.key_path = key_path
        self.message = message or text


class CalibrationError(RuntimeError):
    """A calibration that could not give a trustworthy profile (measurements too unstable)."""
