"""dlsim: a discrete-event simulator of cloud deep-learning clusters, from Python."""
from .results import Results, read_results

__all__ = ["Results", "read_results"]
