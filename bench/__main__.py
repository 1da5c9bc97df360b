"""``python -m bench``: the same as ``gradkit bench``."""

import sys

from bench.run import main

sys.exit(main())
