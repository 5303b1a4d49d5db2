"""Breadth-first exploration of any registered model, distributed on PySpark.

``explore(model, options, spark)`` returns the local checker's ``CheckResult`` with the same
counts, diameter and shortest traces; see ``isrlab.spark_explore.engine`` for the algorithm and
``docs/spark.md`` for running on a cluster.
"""

from isrlab.spark_explore.engine import explore
from isrlab.spark_explore.session import SparkOptions

__all__ = ["SparkOptions", "explore"]
