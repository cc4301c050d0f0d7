"""The backend conformance suite: ``pytest -p torchplug.testing.pytest_plugin --pyargs torchplug.testing.conformance --torchplug-device=DEVICE``."""
