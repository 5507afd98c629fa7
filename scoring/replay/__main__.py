"""`python -m scoring.replay ARCHIVE.zip` (scoring.replay.main)."""

import sys

from scoring.replay import main

sys.exit(main())
