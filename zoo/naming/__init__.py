"""Naming and registry: names, specs, domains, tables, the catalogue, the plugin loader and the registry."""
