"""``python -m traceidx.demo``: write a demo corpus."""

import sys

from traceidx.demo import main

sys.exit(main())
