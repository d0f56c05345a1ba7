"""The daemon and its command line: configuration, wiring of the layers, MQTT publishing, the live view."""

__version__ = "0.1.0"
