from icml26_shared.experiment import main

raise SystemExit(main("geomem._reproduce:EXPERIMENT"))
