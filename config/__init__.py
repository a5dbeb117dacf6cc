"""The default settings file and the demo catalog, shipped as package data (see core/settings.py)."""
