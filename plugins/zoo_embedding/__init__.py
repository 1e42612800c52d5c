"""Token embedding component (plugin ``token-embedding``)."""
