"""Widgets shared by the screens: estimate formatting, the adaptability bars."""
