"""`python -m gpurunner check|evaluate ...` (see gpurunner.cli)."""

from gpurunner.cli import main

raise SystemExit(main())
