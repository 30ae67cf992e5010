"""Widgets shared by the screens: estimate formatting, the adaptability bars, the heatmap,
DataTable helpers."""
