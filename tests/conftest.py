"""Suite-wide setup: our own tests see otel-cycleguard's internal errors instead of a log line.

Outside this suite (a user's agent tests included) internal errors are logged and swallowed.
"""

from __future__ import annotations

from otel_cycleguard._errors import raise_internal_errors

raise_internal_errors()
