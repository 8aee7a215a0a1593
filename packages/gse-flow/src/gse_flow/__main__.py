from icml26_shared.experiment import main

raise SystemExit(main("gse_flow._reproduce:EXPERIMENT"))
