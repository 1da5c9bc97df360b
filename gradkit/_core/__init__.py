"""The core: Variables, immutable States, pure assignment and functional transforms.

Nothing in this package imports the tape or ``gradkit.tf``; they build on it.
"""
