"""The workspace schema: :mod:`.schema` applies the ordered migrations of :mod:`.first` (m001–m007)
and :mod:`.later` (m008 onwards)."""
