"""yeebench: ReFrame check library, results tooling and helpers of the yeebench suite."""

__version__ = "0.1.0"
