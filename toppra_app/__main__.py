"""``python -m toppra_app <command> ...``: the ``toppra-app`` command (`toppra_app.cli`)."""

import sys

from toppra_app.cli import main

sys.exit(main())
