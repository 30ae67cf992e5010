"""Every local GGUF model behind a supervised host process on loopback.

Why a host process. A CUDA build of llama.cpp crashes when it shares a process with torch,
pandas/pyarrow or sklearn (llama-cpp-python issue #1581), and two mirage-tui processes that
each load their own copy of a model starve each other's cores. So a local model is loaded once
per machine, in a process of its own, and every mirage-tui process (the TUI, CLI runs) talks to
it over HTTP on 127.0.0.1.

Why our own host and not ``llama_cpp.server``. Ours serves the same in-process
:class:`models.llama.generator.LlamaGenerator`: the same chat-template rendering, the same prefix reuse,
exact ``label_probs`` from the full next-token distribution, and the same identity (GGUF
sha256, backend ``'llama.cpp'``), so hosted greedy generations are byte-identical to in-process
ones and share their cache. ``llama_cpp.server`` serialises requests anyway, tokenizes with its
own pipeline and reports only top-N logprobs. llama.cpp's own ``llama-server`` (parallel slots,
continuous batching) takes ~15 min to build on 2 cores: too long for ``make setup`` or CI, so it
is an optional backend (:mod:`models.host.llama_server`, ``make llama-server``) used when its
binary is found; its identity backend is ``'llama-server'`` so the caches do not mix.

- :mod:`models.host.registry`: the data dir, the registry of live hosts, client leases.
- :mod:`models.host.server`: the host process (``python -m models.host serve``).
- :mod:`models.host.supervisor`: find or start a host, watch it, stop hosts; leases.
- :mod:`models.host.client`: :class:`HostedGenerator`, a host as a Generator.
- :mod:`models.host.budget`: the user's thread budget, shared by every host of the user on the
  machine whatever the data dir; each host follows its share (grows back when others stop).

Only :mod:`models.host.server` (and the backends it loads) imports llama_cpp; the client side
never does, so a TUI process with torch in it stays safe.
"""

from models.host.registry import data_dir
from models.host.supervisor import list_hosts, stop_hosts

__all__ = ["data_dir", "list_hosts", "stop_hosts"]
