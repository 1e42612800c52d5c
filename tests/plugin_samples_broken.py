"""A plugin module that fails at import, like a plugin missing a dependency."""

import a_dependency_that_is_not_installed  # noqa: F401
