"""Breadth-first exploration of any registered model, distributed on PySpark."""
