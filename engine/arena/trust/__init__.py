"""How far a judge agrees with people, and which judge the arena uses: calibration against
human labels (:mod:`.calibrate` the job, :mod:`.figures` the figures, :mod:`.text` and
:mod:`.page` their text and page), every calibrated judge ranked (:mod:`.rankings`), the default
judge and the lines that head a rating table (:mod:`.default_judge`), the ranking against
accuracy (:mod:`.cross_check`) and people's own verdicts (:mod:`.human_verdicts`)."""
