"""``python -m otel_cycleguard.service``: same as ``cycleguard serve``."""

import sys

from otel_cycleguard.service.cli import main

sys.exit(main())
