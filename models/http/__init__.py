"""An OpenAI-compatible endpoint as a generator (:mod:`.generator`): its errors (:mod:`.errors`),
the identity it reports (:mod:`.identity`) and label probabilities from top logprobs
(:mod:`.label_probs`)."""
