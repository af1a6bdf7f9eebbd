"""`python3 -m sglang ...` behaves like the `sglang` console script."""

import sys

from sglang.cli.main import main

sys.exit(main())
