"""Helpers shared by the test layers (fakes at the edges, real stores and engine)."""
