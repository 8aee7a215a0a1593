"""``python -m costly_cp reproduce [--quick]``."""

from icml26_shared.experiment import main

raise SystemExit(main("costly_cp._reproduce:EXPERIMENT"))
