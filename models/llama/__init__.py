"""llama.cpp in process: the generator (:mod:`.generator`), its log (:mod:`.log`) and how
llama.cpp is built for this CPU (:mod:`.build`, standard library only). Importing the package
imports none of them."""
