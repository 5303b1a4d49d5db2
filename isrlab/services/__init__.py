"""Services below the command layer, used by both ``isrlab.api`` and the ``*_cmd.py``
modules: ``traces`` (trace formats, reading, the Kafka log oracle)."""
