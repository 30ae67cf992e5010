"""Credentials written into a URL (``http://user:sk-…@host/v1``): used, never stored or shown.

:func:`split_credentials` takes the ``user:password@`` part out of an http(s) URL; the HTTP
generator sends it as HTTP Basic auth (what the URL form means) and every URL it keeps, shows
or hashes is the clean one. :func:`redact` is the same for an endpoint spec (``URL#MODEL``), so
a run's configuration, its system labels and a model check's record never hold the key.
Standard library only.
"""

from __future__ import annotations

import urllib.parse


def split_credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """``(url without its userinfo, (user, password))``; ``(url, None)`` when it has none (or
    is not an http(s) URL)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or "@" not in parts.netloc:
        return url, None
    userinfo, _, hostport = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    clean = urllib.parse.urlunsplit(parts._replace(netloc=hostport))
    return clean, (urllib.parse.unquote(user), urllib.parse.unquote(password))


def redact(spec: str) -> str:
    """An endpoint spec (``URL#MODEL``) or a URL without the credentials written into it;
    anything else as it is."""
    url, sep, model = spec.partition("#")
    clean, found = split_credentials(url)
    return spec if found is None else clean + sep + model
