from icml26_shared.experiment import main

raise SystemExit(main("dxpp._reproduce:EXPERIMENT"))
